// The package's maintainer scripts (postinst, prerm, postrm; the same for the .deb and the .rpm) and the lintian
// overrides shipped with the .deb: text that scripts/package.mjs writes into both packages.

/** The startup snapshot the postinst makes on the node and removal takes away. */
export const BLOB = '/var/lib/gdrgate/gate.blob';

// Why lintian's remaining tags do not apply, shipped with the .deb (lintian reads /usr/share/lintian/overrides).
export const LINTIAN_OVERRIDES = [
  '# Node.js links its own zlib fork in; the binary is the Node.js release build, used as its upstream ships it.',
  'gdrgate: embedded-library zlib [usr/lib/gdrgate/node]',
  "# Node.js's release build is not PIE; relinking it is not the packager's to do.",
  'gdrgate: hardening-no-pie [usr/lib/gdrgate/node]',
  "# The package's own program, at the path this package installs it: a gdrgate earlier on PATH (/usr/local/bin) is another.",
  'gdrgate: command-with-path-in-maintainer-script /usr/sbin/gdrgate (plain script) [postinst:*]',
  '# Not uploaded to Debian: no bug to close.',
  'gdrgate: initial-upload-closes-no-bugs',
  '',
].join('\n');

// Maintainer scripts, the same for both (commands by name: dpkg and rpm put /usr/sbin on their PATH). After install or
// upgrade: /run/gdrgate now, systemd told of the unit, the startup snapshot made on this node (else run without it).
export const POSTINST = [
  'command -v systemd-tmpfiles >/dev/null && systemd-tmpfiles --create gdrgate.conf || true',
  '[ -d /run/systemd/system ] && systemctl daemon-reload || true',
  // The package's own program by its path: sudo's secure_path and dpkg put /usr/local/bin before /usr/sbin, where
  // `npm install -g gdrgate` puts another gdrgate (whose blob goes beside itself, never to /var/lib/gdrgate).
  '/usr/sbin/gdrgate startup-snapshot >/dev/null || echo "gdrgate: no startup snapshot made; the Slurm wrappers run without it (/usr/sbin/gdrgate startup-snapshot tries again)" >&2',
  // An agent running the old code restarts itself on the change (it watches its file); one started now is new.
  '[ -d /run/systemd/system ] && systemctl try-restart gdrgate-agent.service >/dev/null 2>&1 || true',
  '',
].join('\n');
// Removal refused while this node's Slurm still runs the wrappers: a Prolog that is not there drains the node with
// Slurm's "Prolog error" on its next job (which no gdrgate resumes), an Epilog or TaskProlog fails every job. Each
// Prolog=, Epilog=, TaskProlog= and HealthCheckProgram= of the node's slurm.conf (SLURM_CONF), the other files of
// /etc/slurm, a configless node's cached copies (SlurmdSpoolDir/conf-cache, at its two usual places) and the files a
// running slurmd was started with (its -f, its SLURM_CONF, its -d's conf-cache) that resolves
// into /usr/libexec/gdrgate, or a script that names it (a site's chain). GDRGATE_REMOVE_IN_USE=1 removes anyway.
// Every key=value as Slurm's parser reads it (parse_config.c): lines continued by a backslash joined, comments cut,
// a value in double quotes or not, any key of a line (not only its first); a value not absolute (a configless node's
// bare script name, fetched beside the cached slurm.conf) and a glob are taken in the file's own directory.
// Files named by Include are read too, each file once.
export const PRERM_IN_USE = [
  // (A function: its positional parameters are the files still to read, the maintainer script's own left as they are.)
  'gdrgate_in_use() {',
  '  here=$PWD',
  '  set -- "${SLURM_CONF:-/etc/slurm/slurm.conf}" /etc/slurm/*.conf /var/spool/slurmd/conf-cache/*.conf /var/spool/slurm/d/conf-cache/*.conf',
  // A running slurmd's own: SLURM_CONF in its environment, -f FILE, and -d DIR's conf-cache (slurmd.c: opt_string
  // "bcCd:Df:F::GhL:Mn:N:svVZ", so -Df FILE and -fFILE too), found by its comm (one grep for every process).
  '  for d in $(grep -lsx slurmd /proc/[0-9]*/comm); do',
  String.raw`    for c in $(tr '\000' '\n' 2>/dev/null <"${'$'}{d%/comm}/environ" | sed -n 's/^SLURM_CONF=//p') $(tr '\000' '\n' 2>/dev/null <"${'$'}{d%/comm}/cmdline" | sed -n -e '/^-[bcCDGhMsvVZ]*[df]$/{N;s/^-[bcCDGhMsvVZ]*\([df]\)\n/-\1/;}' -e 's/^-[bcCDGhMsvVZ]*f\(..*\)/\1/p' -e 's|^-[bcCDGhMsvVZ]*d\(..*\)|\1/conf-cache/slurm.conf|p'); do`,
  '      set -- "$@" "$c"',
  '    done',
  '  done',
  '  while [ $# -gt 0 ]; do',
  '    f=$1 && shift',
  '    case "$f" in /*) ;; *) f=$here/$f ;; esac',
  '    case " $seen " in *" $f "*) continue ;; esac',
  '    seen="$seen $f"',
  '    [ -f "$f" ] && cd "$(dirname -- "$f")" || continue',
  // Include FILE (parse_config.c _parse_include_directive: the keyword in any case, a file absolute or in the conf's
  // directory; no globs) is read as part of the file that names it.
  String.raw`    for i in $(sed -n 's/^[[:space:]]*include[[:space:]]\{1,\}\([^[:space:]#]\{1,\}\).*/\1/Ip' "$f"); do`,
  '      case "$i" in /*) ;; *) i=$PWD/$i ;; esac',
  '      set -- "$@" "$i"',
  '    done',
  String.raw`    for p in $(sed -e ':a' -e '/\\$/{N;s/\\\n//;ba' -e '}' -e 's/#.*//;s/[[:space:]]*=[[:space:]]*/=/g;s/"\([^"]*\)"/\1/g;s/[[:space:]]\{1,\}/\n/g' "$f" | sed -n 's/^\(prolog\|epilog\|taskprolog\|healthcheckprogram\)=//Ip'); do`,
  '      r=$(readlink -f "$p" 2>/dev/null) || r=$p',
  '      case "$r" in /usr/libexec/gdrgate/*) in_use="$in_use $f:$p" ;; *) ! grep -qs /usr/libexec/gdrgate/ "$r" || in_use="$in_use $f:$p" ;; esac',
  '    done',
  '  done',
  '}',
  'in_use= seen=',
  'gdrgate_in_use',
  'if [ -n "$in_use" ] && [ "${GDRGATE_REMOVE_IN_USE-}" != 1 ]; then',
  '  echo "gdrgate: not removed: Slurm on this node still runs its wrappers:$in_use. Without them every job fails (a missing Prolog drains the node: Prolog error). Take them out of slurm.conf and scontrol reconfigure first, or remove with GDRGATE_REMOVE_IN_USE=1." >&2',
  '  exit 1',
  'fi',
  '',
].join('\n');
// Before removal (not upgrade): the agent stopped and disabled, the snapshot made of this program removed, and what a
// startup-snapshot killed while it wrote left (writeAtomic's .gate.blob.<pid>.<random>, 10 MiB each).
export const PRERM_REMOVE = [
  PRERM_IN_USE.trimEnd(),
  '[ -d /run/systemd/system ] && systemctl --no-reload disable --now gdrgate-agent.service >/dev/null 2>&1 || true',
  `rm -f ${BLOB} ${BLOB.replace(/[^/]+$/, '.$&.')}*`,
  '',
].join('\n');
// Purge: what gdrgate itself wrote (run log, sample spool, per-job state) and the unit's enablement links.
export const PURGE = [
  'rm -rf /var/lib/gdrgate /var/log/gdrgate /run/gdrgate',
  'rm -f /etc/systemd/system/multi-user.target.wants/gdrgate-agent.service',
  'if command -v deb-systemd-helper >/dev/null; then deb-systemd-helper purge gdrgate-agent.service >/dev/null || true; fi',
  '',
].join('\n');
