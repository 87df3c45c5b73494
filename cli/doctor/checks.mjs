// `edgework doctor`'s judgement: what production will refuse or lack, from what
// project.mjs read and (with a token) what account.mjs found. Each problem says what
// is wrong and how to fix it; advice does not fail the command; what could not be
// seen without a token is listed as not checked.

/** edgework's Durable Object classes and the binding names the app looks them up by (src/edgework.ts exports them). */
export const DURABLE_OBJECTS = {
  RUNS: "RunDO",
  GLOBAL_TOOLSETS: "GlobalToolsetsDO",
  RUN_INDEX: "RunIndexDO",
  DELIVERIES: "DeliveryLedgerDO",
  ENDED_SESSIONS: "EndedSessionDO",
  WAIT_INDEX: "WaitIndexDO",
  FLOW_KEYS: "FlowKeyDO",
  OPERATIONS: "OperationDO",
  SCHEDULES: "ScheduleDO",
  SCHEDULE_INDEX: "ScheduleIndexDO",
};
/** Secrets every deployment needs: the API's token and the key that signs approval links and sessions. */
const REQUIRED_SECRETS = ["API_TOKEN", "APPROVAL_SECRET"];

const domainOf = (address) => address.slice(address.lastIndexOf("@") + 1).toLowerCase();
/** Whether `domain` is a registrable apex (two labels, or three under a two-letter country's second level such as co.uk). */
const isApex = (domain) => {
  const labels = domain.split(".");
  return labels.length === 2 || (labels.length === 3 && labels[2].length === 2 && labels[1].length <= 3);
};

export function diagnose({ file, config, devVars, approvals, triggers }, account = null) {
  const problems = [];
  const advice = [];
  const unchecked = [];
  const problem = (what, fix) => problems.push({ what, fix });
  if (!config) {
    problem("no wrangler.toml, wrangler.json or wrangler.jsonc in this folder", "run edgework doctor in the project's folder (npm create edgework makes one)");
    return { problems, advice, unchecked };
  }
  const vars = config.vars ?? {};
  const has = (name) => typeof vars[name] === "string" && vars[name] !== "";

  // The runtime.
  if (!(config.compatibility_flags ?? []).includes("nodejs_compat"))
    problem("compatibility_flags lacks nodejs_compat (the openai client and MCP SDK need it)", `add compatibility_flags = ["nodejs_compat"] to ${file}`);
  if (!config.compatibility_date) problem("no compatibility_date", `set compatibility_date in ${file} (edgework is tested with "2026-05-03")`);
  if (typeof config.limits?.cpu_ms !== "number")
    problem(
      "[limits] cpu_ms is not set: an activation gets the plan's default CPU time, unstated",
      'add [limits] cpu_ms = 30000 (docs/operate.md, "CPU and wall time"; Workers Paid)',
    );

  // Durable Objects: a binding per class, and each class created by a migration with SQLite storage.
  const bindings = config.durable_objects?.bindings ?? [];
  const migrations = config.migrations ?? [];
  const sqlite = new Set(migrations.flatMap((m) => m.new_sqlite_classes ?? []));
  const kv = new Set(migrations.flatMap((m) => m.new_classes ?? []));
  for (const [name, cls] of Object.entries(DURABLE_OBJECTS)) {
    const b = bindings.find((x) => x.name === name);
    if (!b) problem(`no Durable Object binding ${name} (class ${cls})`, `add [[durable_objects.bindings]] name = "${name}", class_name = "${cls}"`);
    else if (b.class_name !== cls) problem(`binding ${name} names class ${b.class_name}, not ${cls}`, `set class_name = "${cls}" for ${name}`);
    if (kv.has(cls))
      problem(
        `class ${cls} is created by new_classes (key-value storage); edgework's objects use SQLite`,
        `a new Worker: move ${cls} to new_sqlite_classes before the first deploy`,
      );
    else if (!sqlite.has(cls))
      problem(`no migration creates ${cls}`, `add ${cls} to a [[migrations]] tag's new_sqlite_classes (a new tag after the ones already deployed)`);
  }

  // Model dispatch: "queue" unless MODEL_DISPATCH says "direct".
  const dispatch = vars.MODEL_DISPATCH || "queue";
  const producer = (config.queues?.producers ?? []).find((p) => p.binding === "MODEL_QUEUE");
  if (dispatch === "queue") {
    if (!producer)
      problem(
        "MODEL_DISPATCH is queue (the default) and there is no MODEL_QUEUE producer",
        'add [[queues.producers]] binding = "MODEL_QUEUE", queue = "<name>", or set MODEL_DISPATCH = "direct"',
      );
    else if (!(config.queues?.consumers ?? []).some((c) => c.queue === producer.queue))
      problem(
        `queue ${producer.queue} has a producer and no consumer: model requests would wait for ever`,
        `add [[queues.consumers]] queue = "${producer.queue}"`,
      );
    if (producer && account?.queues?.result && !account.queues.result.includes(producer.queue))
      problem(`queue ${producer.queue} does not exist in the account`, `npx wrangler queues create ${producer.queue}`);
    else if (producer && !account) unchecked.push(`that queue ${producer.queue} exists (npx wrangler queues create ${producer.queue}, once)`);
    else if (producer && account?.queues?.error) unchecked.push(`queues: ${account.queues.error}`);
  }

  // Approval emails: the binding, who sends, where links point, who receives.
  const sendEmail = (config.send_email ?? []).find((s) => s.name === "APPROVAL_EMAIL");
  if (!sendEmail) problem("no send_email binding APPROVAL_EMAIL: approval and answer emails cannot be sent", 'add [[send_email]] name = "APPROVAL_EMAIL"');
  if (!has("APPROVAL_FROM"))
    problem(
      "APPROVAL_FROM is not set: no approval email is sent",
      '[vars] APPROVAL_FROM = "agents@mail.example.com" (an address on a domain with Email Routing)',
    );
  if (!has("PUBLIC_URL"))
    problem(
      "PUBLIC_URL is not set: approval links and the run page have no origin to point at",
      '[vars] PUBLIC_URL = "https://agents.example.com" (the app\'s public origin)',
    );
  const from = has("APPROVAL_FROM") ? vars.APPROVAL_FROM.toLowerCase() : null;
  if (from && sendEmail?.allowed_sender_addresses && !sendEmail.allowed_sender_addresses.map((a) => a.toLowerCase()).includes(from))
    problem(`APPROVAL_FROM ${from} is not in APPROVAL_EMAIL's allowed_sender_addresses`, `add it to allowed_sender_addresses, or change APPROVAL_FROM`);
  const recipients = [...approvals, ...(has("APPROVER_EMAIL") ? [{ address: vars.APPROVER_EMAIL.toLowerCase(), where: "[vars] APPROVER_EMAIL" }] : [])];
  if (!recipients.length)
    advice.push("no approval recipient (approval.notify in a worker file, or APPROVER_EMAIL): approvals are decided by API and on the run page only");
  const allowed = sendEmail?.allowed_destination_addresses?.map((a) => a.toLowerCase());
  if (allowed)
    for (const r of recipients)
      if (!allowed.includes(r.address))
        problem(`${r.address} (${r.where}) is not in APPROVAL_EMAIL's allowed_destination_addresses: the send is refused`, "add it there");
  const onboarded = from && account?.sending?.result ? account.sending.result.some((d) => d === domainOf(from) || domainOf(from).endsWith(`.${d}`)) : null;
  if (recipients.length) {
    if (onboarded) {
      /* Email Sending mails any recipient. */
    } else if (account?.verified?.result) {
      for (const r of recipients)
        if (!account.verified.result.includes(r.address))
          problem(
            `${r.address} (${r.where}) is not a verified Email Routing destination address, and ${from ? domainOf(from) : "the sending domain"} is not onboarded to Email Sending: the send is refused`,
            "verify the address (Email Routing → Destination addresses), or onboard the sending domain to Email Sending with its DNS records",
          );
    } else if (!account)
      unchecked.push(
        `that approval recipients are verified addresses or ${from ? domainOf(from) : "the sending domain"} is onboarded to Email Sending (${recipients.map((r) => r.address).join(", ")})`,
      );
    else unchecked.push(`approval recipients: ${account.verified?.error ?? "not read"}`);
  }
  for (const t of triggers.emails.filter((e) => e.reply)) {
    if (onboarded) continue;
    if (account?.sending?.result)
      problem(
        `email trigger ${t.trigger} (reply: true) answers whoever writes in, and ${from ? domainOf(from) : "no sending domain"} is not onboarded to Email Sending: its answers are refused`,
        "onboard the APPROVAL_FROM domain to Email Sending, with its DNS records (Workers Paid)",
      );
    else if (!account) unchecked.push(`that the sending domain is onboarded to Email Sending (email trigger ${t.trigger} answers whoever writes in)`);
    else unchecked.push(`Email Sending domains: ${account.sending?.error ?? "not read"}`);
  }

  // Email Routing: on a subdomain, never the apex.
  const routed = [
    ...triggers.emails.map((e) => ({ domain: domainOf(e.to), where: `email trigger ${e.trigger}` })),
    ...(has("APPROVAL_REPLY_DOMAIN") ? [{ domain: vars.APPROVAL_REPLY_DOMAIN.toLowerCase(), where: "APPROVAL_REPLY_DOMAIN" }] : []),
  ];
  for (const r of routed)
    if (isApex(r.domain))
      advice.push(
        `${r.where} receives mail on ${r.domain}, an apex domain: enabling Email Routing there replaces its MX records (any mailbox on it stops receiving). Use a subdomain such as agents.${r.domain}`,
      );

  // Public surface.
  if (config.workers_dev !== false)
    problem(
      "workers_dev is not false: the app also answers on its workers.dev URL, outside your routes and Access",
      "set workers_dev = false once a route or custom domain serves it",
    );
  if (config.preview_urls !== false) problem("preview_urls is not false: every uploaded version gets a public preview URL", "set preview_urls = false");

  // Secrets: the required ones, webhook secrets, and what .dev.vars sets that [vars] does not.
  const needed = new Map(REQUIRED_SECRETS.map((n) => [n, "edgework"]));
  if (String(vars.DEFAULT_MODEL ?? "").startsWith("openai:")) needed.set("OPENAI_API_KEY", "DEFAULT_MODEL");
  for (const s of triggers.secrets) needed.set(s.name, s.where);
  for (const n of devVars) if (!(n in vars) && !needed.has(n)) needed.set(n, ".dev.vars");
  if (account?.secrets?.result) {
    for (const [name, where] of needed)
      if (!account.secrets.result.includes(name) && !(name in vars))
        problem(`secret ${name} (${where}) is not set on the deployed Worker`, `npx wrangler secret put ${name}`);
  } else if (!account) unchecked.push(`secrets (npx wrangler secret put NAME): ${[...needed.keys()].join(", ")}`);
  else unchecked.push(`secrets: ${account.secrets?.error ?? "not read"}`);

  advice.push('Workers Paid is required: Workers Free allows 10 ms CPU and 50 subrequests per invocation and has no Email Sending (README, "Deploy")');
  return { problems, advice, unchecked };
}
