/** A whole-number benchmark setting from the environment (unset or empty: the fallback). */
export function setting(name: string, fallback: number): number {
  const raw = process.env[name];
  const value = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name}=${raw} must be a whole number`);
  return value;
}
