// Pure logic of the extension: no `vscode` import here, so that `node --test`
// can exercise it without VS Code (see test/settings.test.js).

import * as os from "node:os";
import * as path from "node:path";

/** The settings section the server reads (workspace/configuration) and the extension contributes. */
export const SECTION = "skill-eval";

/** Python module that runs the server (`python -m skill_eval.server`). */
export const SERVER_MODULE = "skill_eval.server";

/** Executable looked up on PATH when neither `path` nor `interpreter` is set. */
export const DEFAULT_EXECUTABLE = "skill-eval-ls";

/** Keys of the "skill-eval" section that only the client uses; everything else is the linter's. */
export const CLIENT_ONLY_KEYS: ReadonlySet<string> = new Set(["interpreter", "path", "args", "trace"]);

/** The server command behind SKILL.md's code lenses ("2 probes"): returns the probes' Locations. */
export const SHOW_PROBES_COMMAND = "skill-eval.showProbes";
export const CALIBRATE_COMMAND = "skill-eval.calibrate";

/** Commands the extension registers itself, so the language client must not register them again. */
export const CLIENT_COMMANDS: ReadonlySet<string> = new Set([
  "skill-eval.restart",
  "skill-eval.runProbe",
  CALIBRATE_COMMAND,
  SHOW_PROBES_COMMAND,
]);

/** File names the server handles; the document selector is these, on disk. */
export const FIXTURE_FILE_NAMES = ["probe.json", "question.md", "SKILL.md", "output-spec.md"] as const;

export interface ServerSettings {
  interpreter?: string;
  path?: string;
  args?: readonly string[];
}

export interface ExpandContext {
  /** Absolute path of the first workspace folder, if any. */
  workspaceFolder?: string;
  /** Home directory (default: os.homedir()). */
  home?: string;
  /** Environment for `${env:NAME}` (default: process.env). */
  env?: NodeJS.ProcessEnv;
}

export interface ServerCommand {
  command: string;
  args: string[];
  /** Which setting chose the command, for the output channel. */
  source: "path" | "interpreter" | "default";
}

/**
 * Expands `${workspaceFolder}`, `${userHome}`, `${env:NAME}` and a leading `~`
 * in a setting's value, the way VS Code users expect from other extensions.
 */
export function expandVariables(value: string, context: ExpandContext = {}): string {
  const home = context.home ?? os.homedir();
  const env = context.env ?? process.env;
  let result = value.replace(/\$\{(workspaceFolder|userHome|env:([A-Za-z_][A-Za-z0-9_]*))\}/g, (whole, name: string, envName?: string) => {
    if (envName !== undefined) {
      return env[envName] ?? "";
    }
    if (name === "userHome") {
      return home;
    }
    return context.workspaceFolder ?? whole;
  });
  if (result === "~" || result.startsWith("~/") || result.startsWith("~\\")) {
    result = path.join(home, result.slice(1));
  }
  return result;
}

/**
 * The command line that starts the server:
 * `skill-eval.path` wins; else `<skill-eval.interpreter> -m skill_eval.server`;
 * else `skill-eval-ls` from PATH. `skill-eval.args` is appended in every case.
 */
export function resolveServerCommand(settings: ServerSettings, context: ExpandContext = {}): ServerCommand {
  const extra = (settings.args ?? []).filter((arg) => typeof arg === "string").map((arg) => expandVariables(arg, context));
  const executable = (settings.path ?? "").trim();
  if (executable) {
    return { command: expandVariables(executable, context), args: extra, source: "path" };
  }
  const interpreter = (settings.interpreter ?? "").trim();
  if (interpreter) {
    return { command: expandVariables(interpreter, context), args: ["-m", SERVER_MODULE, ...extra], source: "interpreter" };
  }
  return { command: DEFAULT_EXECUTABLE, args: extra, source: "default" };
}

/**
 * The linter's part of the "skill-eval" section (select, ignore, and any other
 * config-file key a user writes there), without the client-only keys and
 * without empty lists (an empty `select` would otherwise override the config
 * file's `select` with "all rules").
 */
export function linterSettings(section: Readonly<Record<string, unknown>> | null | undefined): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  if (!section) {
    return result;
  }
  for (const [key, value] of Object.entries(section)) {
    if (CLIENT_ONLY_KEYS.has(key) || value === undefined || value === null) {
      continue;
    }
    if (typeof value === "function") {
      continue; // WorkspaceConfiguration's own methods (get, has, inspect, update)
    }
    if (Array.isArray(value) && value.length === 0) {
      continue;
    }
    result[key] = value;
  }
  return result;
}

/** Server commands the language client may register: all but the extension's own. */
export function serverCommandsToRegister(commands: readonly string[] | undefined): string[] {
  return (commands ?? []).filter((command) => !CLIENT_COMMANDS.has(command));
}

/**
 * The probe.json a run is about, given the active file: probe.json itself, or
 * the probe.json beside a question.md (or any other artifact of the probe).
 * Returns undefined when the file belongs to no probe.
 */
export function probeFileFor(filePath: string, exists: (candidate: string) => boolean): string | undefined {
  if (path.basename(filePath) === "probe.json") {
    return filePath;
  }
  const sibling = path.join(path.dirname(filePath), "probe.json");
  return exists(sibling) ? sibling : undefined;
}

/** Whether a file name is one the server lints (the document selector's patterns). */
export function isFixtureFile(filePath: string): boolean {
  return (FIXTURE_FILE_NAMES as readonly string[]).includes(path.basename(filePath));
}
