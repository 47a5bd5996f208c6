// What a snapshot may hold: checked while it is read (open.ts, tree.ts, tar.ts) and when one is written (build.ts).
// A real 8-GPU node's snapshot is ~10,000 entries, a few MiB unpacked and 12 components deep: these leave
// ten times that and stop a hostile file (a deep path, a long link, a gzip bomb) before it costs CPU or memory.

/** The file as stored (gzip or plain tar). */
export const MAX_FILE_BYTES = 64 * 1024 * 1024;
/** The tar once inflated: a gzip bomb stops here, inside zlib. */
export const MAX_TAR_BYTES = 128 * 1024 * 1024;
/** Tree nodes, the directories a path implies included (each costs memory whether or not it has an entry). */
export const MAX_ENTRIES = 100_000;
/** Components of one path (sysfs's deepest device paths are ~20). */
export const MAX_DEPTH = 64;
/** PATH_MAX (include/uapi/linux/limits.h): a path, or a link's target. */
export const MAX_PATH_BYTES = 4096;
/** NAME_MAX: one component. */
export const MAX_NAME_BYTES = 255;
/** Linux's MAXSYMLINKS (include/linux/namei.h): more links than this in one lookup is ELOOP. */
export const MAX_LINKS = 40;
