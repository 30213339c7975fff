// VS Code client for skill-eval-ls. The logic that does not need VS Code lives
// in ./settings (unit-tested with `node --test`).

import * as fs from "node:fs";
import * as vscode from "vscode";
import {
  ExecuteCommandRequest,
  LanguageClient,
  LanguageClientOptions,
  RevealOutputChannelOn,
  ServerOptions,
  StaticFeature,
  DynamicFeature,
  TransportKind,
} from "vscode-languageclient/node";
import {
  CALIBRATE_COMMAND,
  SECTION,
  SHOW_PROBES_COMMAND,
  linterSettings,
  probeFileFor,
  resolveServerCommand,
  serverCommandsToRegister,
} from "./settings";

let client: SkillEvalClient | undefined;
let outputChannel: vscode.OutputChannel | undefined;
let traceChannel: vscode.OutputChannel | undefined;
let starting: Promise<void> | undefined;

/**
 * The language client, minus one thing: it must not register VS Code commands
 * for server commands that the extension registers itself (`skill-eval.runProbe`
 * and `skill-eval.calibrate` are both server commands and palette commands with
 * a trust check: the code lens and the code actions run them through it).
 */
class SkillEvalClient extends LanguageClient {
  public registerFeature(feature: StaticFeature | DynamicFeature<any>): void {
    const dynamic = feature as DynamicFeature<any>;
    if (dynamic.registrationType?.method === ExecuteCommandRequest.method) {
      const register = dynamic.register.bind(dynamic);
      dynamic.register = (data) =>
        register({
          ...data,
          registerOptions: {
            ...data.registerOptions,
            commands: serverCommandsToRegister(data.registerOptions?.commands),
          },
        });
    }
    super.registerFeature(feature);
  }
}

function workspaceFolderPath(): string | undefined {
  return vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
}

function linterConfiguration(scope?: vscode.ConfigurationScope): Record<string, unknown> {
  const section = vscode.workspace.getConfiguration(SECTION, scope);
  // A WorkspaceConfiguration is a proxy; copy its plain values.
  return linterSettings(JSON.parse(JSON.stringify(section)) as Record<string, unknown>);
}

function createClient(): SkillEvalClient {
  const configuration = vscode.workspace.getConfiguration(SECTION);
  const command = resolveServerCommand(
    {
      interpreter: configuration.get<string>("interpreter"),
      path: configuration.get<string>("path"),
      args: configuration.get<string[]>("args"),
    },
    { workspaceFolder: workspaceFolderPath() },
  );
  outputChannel ??= vscode.window.createOutputChannel("skill-eval");
  traceChannel ??= vscode.window.createOutputChannel("skill-eval (trace)");
  outputChannel.appendLine(`Starting ${command.command} ${command.args.join(" ")} (from ${command.source === "default" ? "PATH" : `skill-eval.${command.source}`})`);

  const serverOptions: ServerOptions = {
    command: command.command,
    args: command.args,
    transport: TransportKind.stdio,
    options: { cwd: workspaceFolderPath() },
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [
      { scheme: "file", language: "json", pattern: "**/probe.json" },
      { scheme: "file", language: "markdown", pattern: "**/{SKILL,output-spec,question}.md" },
      { scheme: "file", language: "markdown", pattern: "**/evals/probes/**/*.md" },
    ],
    initializationOptions: linterConfiguration(),
    synchronize: {
      configurationSection: SECTION,
      fileEvents: vscode.workspace.createFileSystemWatcher("**/{probe.json,SKILL.md,output-spec.md,*.md,skill-eval.toml,pyproject.toml}"),
    },
    outputChannel,
    traceOutputChannel: traceChannel,
    revealOutputChannelOn: RevealOutputChannelOn.Never,
    middleware: {
      workspace: {
        // Answer workspace/configuration for "skill-eval" with the linter's keys only.
        configuration: async (params, token, next) => {
          const result = await next(params, token);
          if (!Array.isArray(result)) {
            return result;
          }
          return params.items.map((item, index) => {
            if (item.section !== SECTION) {
              return result[index];
            }
            const scope = item.scopeUri ? vscode.Uri.parse(item.scopeUri) : undefined;
            return linterConfiguration(scope);
          });
        },
      },
    },
  };
  return new SkillEvalClient("skill-eval", "skill-eval", serverOptions, clientOptions);
}

async function startClient(): Promise<void> {
  client = createClient();
  try {
    await client.start();
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    outputChannel?.appendLine(`skill-eval-ls failed to start: ${message}`);
    void vscode.window
      .showErrorMessage(
        `skill-eval: the language server did not start (${message}). Install it with \`pip install 'skill-eval[server]'\`, or set skill-eval.path / skill-eval.interpreter.`,
        "Open Settings",
        "Show Output",
      )
      .then((choice) => {
        if (choice === "Open Settings") {
          void vscode.commands.executeCommand("workbench.action.openSettings", SECTION);
        } else if (choice === "Show Output") {
          outputChannel?.show();
        }
      });
  }
}

async function stopClient(): Promise<void> {
  const current = client;
  client = undefined;
  if (current) {
    try {
      await current.stop();
    } catch {
      // Already stopped or never started.
    }
  }
}

async function restart(): Promise<void> {
  await starting;
  starting = (async () => {
    await stopClient();
    await startClient();
  })();
  await starting;
}

function activeProbeUri(argument: unknown): vscode.Uri | undefined {
  const candidate = argument instanceof vscode.Uri ? argument : vscode.window.activeTextEditor?.document.uri;
  if (!candidate || candidate.scheme !== "file") {
    return undefined;
  }
  const probe = probeFileFor(candidate.fsPath, (path) => fs.existsSync(path));
  return probe ? vscode.Uri.file(probe) : undefined;
}

async function runProbe(argument?: unknown): Promise<unknown> {
  if (!vscode.workspace.isTrusted) {
    void vscode.window.showWarningMessage("skill-eval: probes are not run in an untrusted workspace (a run starts the agents named in the workspace's config). Trust the workspace to run it.");
    return undefined;
  }
  const probe = activeProbeUri(argument);
  if (!probe) {
    void vscode.window.showWarningMessage("skill-eval: open a probe.json (or its question.md) to run its probe.");
    return undefined;
  }
  if (!client || !client.isRunning()) {
    void vscode.window.showErrorMessage("skill-eval: the language server is not running; see the 'skill-eval' output.");
    return undefined;
  }
  const document = vscode.workspace.textDocuments.find((doc) => doc.uri.toString() === probe.toString());
  if (document?.isDirty) {
    await document.save();
  }
  return vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: `skill-eval: running ${vscode.workspace.asRelativePath(probe)}`, cancellable: false },
    async () => {
      try {
        return await client!.sendRequest(ExecuteCommandRequest.type, {
          command: "skill-eval.runProbe",
          arguments: [probe.toString()],
        });
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        void vscode.window.showErrorMessage(`skill-eval: run failed: ${message}`);
        return undefined;
      }
    },
  );
}

/**
 * skill-eval.calibrate: from the palette (the active probe), or from a code
 * action ("Calibrate probe" on probe.json, "Calibrate the N probes of this
 * step" on a SKILL.md heading), whose arguments (a probe.json URI or a list of
 * them) are passed on to the server unchanged. Refused in an untrusted
 * workspace, as a run is.
 */
async function calibrate(...args: unknown[]): Promise<unknown> {
  if (!vscode.workspace.isTrusted) {
    void vscode.window.showWarningMessage("skill-eval: probes are not calibrated in an untrusted workspace (calibration starts the agents named in the workspace's config). Trust the workspace to run it.");
    return undefined;
  }
  let argumentsToSend = args.filter((argument) => typeof argument === "string" || Array.isArray(argument));
  if (argumentsToSend.length === 0) {
    const probe = activeProbeUri(args[0]);
    if (!probe) {
      void vscode.window.showWarningMessage("skill-eval: open a probe.json (or its question.md) to calibrate its probe.");
      return undefined;
    }
    argumentsToSend = [probe.toString()];
  }
  if (!client || !client.isRunning()) {
    void vscode.window.showErrorMessage("skill-eval: the language server is not running; see the 'skill-eval' output.");
    return undefined;
  }
  await vscode.workspace.saveAll(false);
  try {
    return await client.sendRequest(ExecuteCommandRequest.type, { command: CALIBRATE_COMMAND, arguments: argumentsToSend });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    void vscode.window.showErrorMessage(`skill-eval: calibration failed: ${message}`);
    return undefined;
  }
}

/**
 * SKILL.md's code lens ("2 probes") runs the server command skill-eval.showProbes,
 * which answers with the probes' locations; show them in the references peek.
 */
async function showProbes(uri: string, line: number): Promise<void> {
  if (!client || !client.isRunning()) {
    return;
  }
  const locations = await client.sendRequest(ExecuteCommandRequest.type, { command: SHOW_PROBES_COMMAND, arguments: [uri, line] });
  const converted = Array.isArray(locations) ? await client.protocol2CodeConverter.asReferences(locations) : [];
  await vscode.commands.executeCommand(
    "editor.action.showReferences",
    vscode.Uri.parse(uri),
    new vscode.Position(line, 0),
    converted ?? [],
  );
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  context.subscriptions.push(
    vscode.commands.registerCommand("skill-eval.restart", restart),
    vscode.commands.registerCommand("skill-eval.runProbe", runProbe),
    vscode.commands.registerCommand(CALIBRATE_COMMAND, calibrate),
    vscode.commands.registerCommand(SHOW_PROBES_COMMAND, showProbes),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (["interpreter", "path", "args"].some((key) => event.affectsConfiguration(`${SECTION}.${key}`))) {
        void restart();
      }
    }),
    vscode.workspace.onDidGrantWorkspaceTrust(() => void restart()),
    { dispose: () => void stopClient() },
  );
  starting = startClient();
  await starting;
}

export async function deactivate(): Promise<void> {
  await stopClient();
}
