import { Hono } from "hono/tiny";
import { installDeploy } from "../src/catalog";
import { handleApprovalReply, isApprovalReply } from "../src/email/reply-approval";
import type { CodeFunction, ToolsetKind } from "../src/engine";
import { appKinds } from "../src/engine/toolsets/app-kinds";
import { app as http, notFoundJson } from "../src/http/app";
import { installBasePath } from "../src/http/base-path";
import { conversationAddressed, receiveConversationReply } from "../src/triggers/email-conversation";
import { receiveEmail } from "../src/triggers/inbound-email";
import { startScheduled } from "../src/triggers/scheduled";
import { consumeModelRequests } from "./model-consumer";

/** What a Worker gives edgework: its catalog and code, and where it is mounted. */
export interface AppOptions {
  /** The catalog files by path (worker files, triggers.yaml, models.yaml): `files` of the module `edgework build` writes. */
  files: Record<string, string>;
  /** Code functions (`defineFunction`), in the catalog beside the workers. */
  functions?: readonly CodeFunction[];
  /** The app's own toolset kinds (`defineToolset`) by kind name, beside the built-in ones (files, http, mcp, worker_creation). */
  toolsets?: Record<string, ToolsetKind>;
  /** The names of wrangler.toml's [vars] (`wranglerVars` of the generated module): the only values a run may show; others are redacted. */
  wranglerVars?: readonly string[];
  /** The path edgework is mounted under in a larger app (`/agents`); links, pages and cookies honour it. Default: the root. */
  basePath?: string;
}

/** The Worker's handlers, and the Hono app to mount (`outer.route(basePath, app.http)`). */
export interface EdgeworkApp {
  /** Requests whose path starts with the basePath (all of them without one). */
  fetch(request: Request, env: Env, ctx: ExecutionContext): Response | Promise<Response>;
  /** Cron Triggers: the `schedule:` triggers of triggers.yaml. */
  scheduled(controller: ScheduledController, env: Env): Promise<void>;
  /** Email Routing: replies to approval emails decide; other mail may start an `email:` trigger. */
  email(message: ForwardableEmailMessage, env: Env, ctx: ExecutionContext): Promise<void>;
  /** MODEL_DISPATCH=queue: the model requests runs hand off (wrangler.toml's [[queues.consumers]]). */
  queue(batch: MessageBatch<unknown>, env: Env): Promise<void>;
  /** The routes without the basePath, for `outer.route(basePath, app.http)`. */
  http: Hono<{ Bindings: Env }>;
}

/** The routes under `basePath`, answering the app's JSON 404 for the rest. */
function mounted(basePath: string | undefined) {
  if (!basePath || basePath === "/") return http;
  const outer = new Hono<{ Bindings: Env }>();
  outer.route(basePath, http);
  outer.notFound(notFoundJson);
  return outer;
}

/**
 * edgework in a Worker: installs the catalog, code and kinds for this isolate (calling it
 * again replaces them, as a new deploy would) and returns the handlers to export as the
 * Worker's default. The Durable Object classes wrangler.toml names are exported beside it.
 */
export function createApp(options: AppOptions): EdgeworkApp {
  const kinds = appKinds(options.toolsets);
  installBasePath(options.basePath);
  installDeploy({ files: options.files, kinds, functions: options.functions ?? [], wranglerVars: options.wranglerVars ?? [] });
  const routes = mounted(options.basePath);
  return {
    fetch: (request, env, ctx) => routes.fetch(request, env, ctx),
    async scheduled(controller, env) {
      await startScheduled(env, controller);
    },
    async email(message, env, ctx) {
      const conversation = conversationAddressed(message, env);
      if (conversation) await receiveConversationReply(env, message, conversation);
      else if (isApprovalReply(message, env)) await handleApprovalReply(message, env, ctx);
      else await receiveEmail(env, message);
    },
    async queue(batch, env) {
      await consumeModelRequests(batch, env);
    },
    http,
  };
}
