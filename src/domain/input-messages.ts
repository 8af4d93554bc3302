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
 * arguments alike: "is required" and "must be a string" rather than zod's "Invalid input:
 * expected string, received undefined". Schemas that say their own message keep it.
 */
export function useInputMessages(): void {
  z.config({
    customError: (issue) => {
      if (issue.code !== 'invalid_type') return undefined;
      if (issue.input === undefined) return 'is required';
      const expected = TYPE_WORDS[issue.expected];
      return expected ? `must be ${expected}` : undefined;
    },
  });
}

/**
 * The problems worth telling about one field: when its type is wrong, only that. (zod also runs
 * a string's length checks on an array, so `[]` for a string was both "must be a string" and
 * "is required".)
 */
export function fieldProblems(issues: ReadonlyArray<{ code: string; message: string }>): string[] {
  const wrongType = issues.filter((i) => i.code === 'invalid_type');
  return [...new Set((wrongType.length ? wrongType : issues).map((i) => i.message))];
}
