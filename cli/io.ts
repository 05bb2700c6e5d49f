/** What a command reads and writes; tests pass their own. */
export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: Record<string, string | undefined>;
  cwd: string;
  /** What `chat` reads messages and answers from. */
  stdin?: NodeJS.ReadableStream;
  stdinIsTTY?: boolean;
  /** Ctrl-C: returns the function that stops listening. */
  onInterrupt?: (handler: () => void) => () => void;
  exit?: (code: number) => void;
}
