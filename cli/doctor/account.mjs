// What the Cloudflare account reports, for `edgework doctor --token`: verified Email
// Routing destination addresses, Email Sending domains, queues and the Worker's secret
// names. Read-only GETs against the API (`apiBase`: a fake one in tests); a lookup that
// fails is reported as not checked, with the status, never as a problem of the project.
const PAGES = 5;

export function accountApi({ token, apiBase, fetch = globalThis.fetch }) {
  const base = apiBase.replace(/\/+$/, "");
  /** One GET: the envelope's `result`, or a sentence saying why not. */
  async function get(path) {
    let res;
    try {
      res = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${token}`, accept: "application/json" }, signal: AbortSignal.timeout(15_000) });
    } catch (err) {
      return { error: `${path}: ${err.message}` };
    }
    const body = await res.json().catch(() => null);
    if (!res.ok || !body?.success) {
      const why = body?.errors?.[0]?.message;
      return { error: `${path} answered ${res.status}${why ? `: ${String(why).slice(0, 200)}` : ""}`, status: res.status };
    }
    return { result: body.result, info: body.result_info };
  }
  async function all(path) {
    const out = [];
    for (let page = 1; page <= PAGES; page++) {
      const r = await get(`${path}${path.includes("?") ? "&" : "?"}page=${page}&per_page=50`);
      if (r.error) return r;
      out.push(...(r.result ?? []));
      if (!r.info || page >= (r.info.total_pages ?? 1)) break;
    }
    return { result: out };
  }
  return { get, all };
}

/** The account id: given, or the token's only account. */
async function accountId(api, given) {
  if (given) return { id: given };
  const r = await api.get("/accounts");
  if (r.error) return r;
  if (r.result?.length === 1) return { id: r.result[0].id };
  return {
    error: `the token reaches ${r.result?.length ?? 0} accounts: name one with account_id in the wrangler configuration, CLOUDFLARE_ACCOUNT_ID or --account-id`,
  };
}

/** The zone a domain is in (the domain or its nearest parent with a zone), or null. */
async function zoneOf(api, domain) {
  const labels = domain.split(".");
  for (let i = 0; i < labels.length - 1; i++) {
    const r = await api.get(`/zones?name=${encodeURIComponent(labels.slice(i).join("."))}`);
    if (r.error) return r;
    if (r.result?.length) return { zone: r.result[0] };
  }
  return { zone: null };
}

/**
 * What the checks need from the account. `sendingDomain`: the APPROVAL_FROM domain, whose
 * zone's Email Sending subdomains say whether it is onboarded. Each part is its data or `{ error }`.
 */
export async function readAccount(api, { accountId: given, script, sendingDomain }) {
  const account = await accountId(api, given);
  if (account.error) return { error: account.error };
  const id = account.id;
  const [addresses, queues, secrets] = await Promise.all([
    api.all(`/accounts/${id}/email/routing/addresses`),
    api.all(`/accounts/${id}/queues`),
    script ? api.get(`/accounts/${id}/workers/scripts/${encodeURIComponent(script)}/secrets`) : { error: "no Worker name in the configuration" },
  ]);
  let sending = { error: "no APPROVAL_FROM to look up" };
  if (sendingDomain) {
    const zone = await zoneOf(api, sendingDomain);
    if (zone.error) sending = zone;
    else if (!zone.zone) sending = { result: [], note: `${sendingDomain} is in no zone of this account` };
    else sending = await api.get(`/zones/${zone.zone.id}/email/sending/subdomains`);
  }
  return {
    verified: addresses.error ? addresses : { result: addresses.result.filter((a) => a.verified).map((a) => String(a.email).toLowerCase()) },
    queues: queues.error ? queues : { result: queues.result.map((q) => q.queue_name) },
    // A Worker never deployed has no secrets to list: every one is missing.
    secrets: secrets.status === 404 ? { result: [] } : secrets.error ? secrets : { result: secrets.result.map((s) => s.name) },
    sending: sending.error ? sending : { result: (sending.result ?? []).map((s) => String(s.name ?? "").toLowerCase()) },
  };
}
