// Guardrails (artifacts of type guardrail): regex_deny, max_chars, json_schema.
import { Ajv } from 'ajv';
import type { JsonObject } from '../kernel/json.js';

// Guardrail schemas are authored by users: valid JSON Schema that ajv's strict mode would refuse
// (a `required` key without its property) must check answers, not crash the run.
const guardrailAjv = new Ajv({ allErrors: true, strict: false });

export interface Guardrail {
  name: string;
  content: JsonObject;
}

/** The first violation of `text` against the guardrails, or null. `json` asks for JSON Schema checks too. */
export function checkGuardrails(text: string, guardrails: readonly Guardrail[], json = false): string | null {
  for (const { name, content } of guardrails) {
    const max = content.max_chars;
    if (typeof max === 'number' && [...text].length > max) return `${name}: longer than ${max} characters`;
    const patterns = Array.isArray(content.regex_deny) ? content.regex_deny : [];
    for (const pattern of patterns) {
      let regex: RegExp;
      try {
        regex = new RegExp(String(pattern), 'i');
      } catch {
        return `${name}: regex_deny pattern ${String(pattern)} is not a regular expression`;
      }
      if (regex.test(text)) return `${name}: matches a denied pattern`;
    }
    if (json && content.json_schema && typeof content.json_schema === 'object') {
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        return `${name}: not JSON`;
      }
      let validate: ReturnType<typeof guardrailAjv.compile>;
      try {
        validate = guardrailAjv.compile(content.json_schema as object);
      } catch (error) {
        return `${name}: json_schema is not a valid schema: ${(error as Error).message}`;
      }
      if (!validate(parsed)) return `${name}: ${guardrailAjv.errorsText(validate.errors)}`;
    }
  }
  return null;
}
