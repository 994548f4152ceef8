/**
 * The usage lines of the commands main.ts lists, in a module of their own: `--version`, `--help` and a
 * wrong command need no more than this, so the command line loads a subcommand's modules only to run it.
 */
export const LOGIN_USAGE = `  login [--console | --sso] [--email E] [--cli PATH]
                                             log in to Claude Code with the installed CLI (its own login, in this terminal)
`;

export const TRANSCRIPT_USAGE = `  transcript show <file> [--raw] [--type T,T]
                                             timeline of a recorded run or a raw stream-json capture
  transcript summary <file> [--json]         turns, tokens, cost, message counts, tool calls, result, exit
  transcript diff <before> <after> [--json]  normalised differences between two runs; exits 1 when they differ
  transcript trace <file> [--out FILE]       the run as Chrome trace-event JSON (open in Perfetto)
  transcript import <capture> [--out FILE]   a raw stream-json capture as a ktx-claude-code transcript
`;
