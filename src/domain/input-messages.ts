import { z } from 'zod';

const TYPE_WORDS: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  bigint: 'an integer',
  boolean: 'true or false',
  object: 'an object',
  array: 'an array',
  date: 'a date',
};

/**
 * Messages for what a schema does not word itself, for REST bodies and queries and MCP
 * arguments alike: "is required", "must be a string", "must be at most 5,000 characters",
 * "must be one of: a, b" rather than zod's "Invalid input: expected string, received undefined"
 * or "Too big: expected string to have <=5000 characters". Schemas that say their own message
 * keep it.
 */
export function useInputMessages(): void {
  z.config({
    customError: (issue) => {
      switch (issue.code) {
        case 'invalid_type': {
          if (issue.input === undefined) return 'is required';
          const expected = TYPE_WORDS[issue.expected];
          return expected ? `must be ${expected}` : undefined;
        }
        case 'too_big':
        case 'too_small': {
          const big = issue.code === 'too_big';
          const limit = Number(big ? issue.maximum : issue.minimum);
          if (!big && limit === 1 && issue.inclusive !== false && issue.origin !== 'number' && issue.origin !== 'int') return 'must not be empty';
          const bound = limit.toLocaleString('en-US');
          if (issue.origin === 'string') return `must be ${big ? 'at most' : 'at least'} ${bound} characters`;
          if (issue.origin === 'array' || issue.origin === 'set') return `must have ${big ? 'at most' : 'at least'} ${bound} items`;
          if (issue.origin === 'number' || issue.origin === 'int' || issue.origin === 'bigint') {
            return issue.inclusive === false ? `must be ${big ? 'less' : 'greater'} than ${bound}` : `must be ${big ? 'at most' : 'at least'} ${bound}`;
          }
          return undefined;
        }
        case 'invalid_value':
          return `must be one of: ${issue.values.map(String).join(', ')}`;
        default:
          return undefined;
      }
    },
  });
}

/** One zod issue about a field: its code, message and, for a bound, what it bounds (`origin`). */
export interface FieldIssue {
  code: string;
  message: string;
  origin?: string | undefined;
}

const isBound = (i: FieldIssue) => i.code === 'too_big' || i.code === 'too_small';

/**
 * The problems worth telling about one field: when its type is wrong, only that. (zod also runs
 * a string's length checks on an array, so `[]` for a string was both "must be a string" and
 * "is required".) zod's `int()` bounds a number to the safe integers by itself (origin `int`);
 * beside a bound of the field's own on the same side, which is tighter, it would say another
 * limit for the same value (1e20: "at most 9,007,199,254,740,991" and "at most 2,147,483,647"),
 * so only the field's own is told.
 */
export function fieldProblems(issues: ReadonlyArray<FieldIssue>): string[] {
  const wrongType = issues.filter((i) => i.code === 'invalid_type');
  const told = wrongType.length
    ? wrongType
    : issues.filter((i) => !(isBound(i) && i.origin === 'int' && issues.some((j) => j !== i && j.code === i.code && j.origin !== 'int')));
  return [...new Set(told.map((i) => i.message))];
}
