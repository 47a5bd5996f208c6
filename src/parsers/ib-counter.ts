// An RDMA port's data counters, /sys/class/infiniband/<dev>/ports/<n>/counters/port_{xmit,rcv}_data
// (drivers/infiniband/core/sysfs.c show_pma_counter): "%u\n" from the 32-bit PortCounters, or "%llu\n" from the 64-bit
// PortCountersExtended where the device's PMA says it has them (get_counter_table); a device whose PMA does not answer
// prints "N/A (no PMA)\n". Each is the data octets divided by 4 (Documentation/ABI/stable/sysfs-class-infiniband). The
// 32-bit counters saturate at 2^32-1 (IBA PortCounters stop there, never wrap), so a value there tells nothing more.
import type { Parsed } from './sysfs.js';

/** A 32-bit PortCounters data counter that has stopped (IBA: counters saturate). */
export const SATURATED_32 = 0xffff_ffffn;
const MAX_64 = 0xffff_ffff_ffff_ffffn;

/**
 * One counter as an exact count of 4-octet units (a 64-bit counter of a busy port passes 2^53 within weeks, so never a
 * Number); anything else (the PMA's "N/A", an empty or garbled file, a saturated 32-bit counter) says why not.
 */
export function parsePortCounter(text: string): Parsed<bigint> {
  const body = text.endsWith('\n') ? text.slice(0, -1) : text;
  if (body.startsWith('N/A')) return { ok: false, error: `the adapter's performance agent does not answer (${JSON.stringify(body.slice(0, 40))})` };
  // "%u" and "%llu" write no leading zero: a text with one is not the kernel's.
  if (!/^(?:0|[1-9]\d{0,19})$/.test(body)) return { ok: false, error: `not a counter: ${JSON.stringify(body.slice(0, 40))}` };
  const n = BigInt(body);
  if (n > MAX_64) return { ok: false, error: `not a counter: ${body} is beyond 64 bits` };
  if (n === SATURATED_32) return { ok: false, error: 'a 32-bit counter that has stopped at its maximum (4294967295)' };
  return { ok: true, value: n };
}
