// spec.personal_data: the run input and context keys sealed in the run's journal (docs/privacy.md). Its shape and V-codes (V047, V048).

/** findings.ts's Add, for errors (not imported: findings.ts depends on definition.ts, which reads this). */
type Add = (code: string, severity: 'error', message: string) => void;

/** A top-level key of the input or the context, as templates name it. */
const KEY_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** spec.personal_data as a list of keys (absent or unusable: none; the validator reports why). */
export function toPersonalData(value: unknown): string[] {
  if (!Array.isArray(value)) return [];
  return [...new Set(value.filter((key): key is string => typeof key === 'string' && KEY_PATTERN.test(key)))];
}

/** V047: spec.personal_data must be a list of strings; V048: each a top-level key name, listed once. */
export function validatePersonalData(value: unknown, add: Add): void {
  if (value === undefined) return;
  if (!Array.isArray(value) || value.some((key) => typeof key !== 'string')) {
    add('V047', 'error', 'spec.personal_data must be a list of input/context key names, such as [email, phone]');
    return;
  }
  const seen = new Set<string>();
  for (const key of value as string[]) {
    if (!KEY_PATTERN.test(key)) add('V048', 'error', `spec.personal_data: "${key}" is not a top-level key name (letters, digits, _)`);
    else if (seen.has(key)) add('V048', 'error', `spec.personal_data lists "${key}" twice`);
    seen.add(key);
  }
}
