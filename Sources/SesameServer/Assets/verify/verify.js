// The hosted hand-off page, /verify?request_id=…: a partner's verification request confirmed with a passkey here
// (the linked person's, or anyone's for an unlinked request), or declined. It talks to /operations/handoff/*, which
// complete requests through the same routine as the inline passkey.
import { parseCreationOptions, parseRequestOptions, credentialToJSON } from "{{sdk}}";

const requestID = new URLSearchParams(location.search).get("request_id") || "";
const $ = (id) => document.getElementById(id);
let pending = null;

async function call(action, body) {
  const response = await fetch(`/operations/handoff/${action}`, {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ request_id: requestID, ...body }),
    credentials: "omit", referrerPolicy: "no-referrer",
  });
  const answer = await response.json();
  if (answer?.data?.error) throw new Error(answer.data.error.message || "The server could not answer.");
  return answer.data.data;
}

function state(name, text) {
  $("state").dataset.state = name;
  $("state").textContent = text;
  document.body.dataset.ready = "true";
}

function message(text, reason = "") {
  $("message").hidden = !text;
  $("message").textContent = text;
  $("message").dataset.reason = reason;
}

function buttons(shown) {
  for (const id of ["confirm", "decline", "create"]) {
    $(id).hidden = !shown;
    $(id).disabled = false;
  }
  // "Create your ID" only where anyone's passkey may answer (an unlinked request).
  $("newcomer").hidden = !(shown && pending && pending.options.allowCredentials.length === 0);
}

// The setup page's calls (/app/api), for "Create your ID" here: the person and their passkey, then the confirmation.
async function setup(path, body) {
  const response = await fetch(`/app/api/${path}`, {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body), credentials: "same-origin",
    referrerPolicy: "no-referrer",
  });
  const answer = await response.json().catch(() => null);
  if (!response.ok) throw new Error(answer?.error?.message || "The server could not answer.");
  return answer.data.data;
}

// Outcomes after which nothing more can happen on this request.
const closed = {
  verified: ["verified", "Confirmed. You can return to the app."],
  user_denied: ["declined", "Declined. You can return to the app."],
  request_expired: ["expired", "This request expired: go back to the app and start again."],
  request_closed: ["finished", "This request is already finished."],
  unknown_request: ["unknown", "This link is not valid: go back to the app and start again."],
  already_linked: ["failed", "This account is already linked to someone else; the request was stopped."],
  completion_failed: ["failed", "Something went wrong; the request was stopped. Go back to the app and start again."],
};

// Outcomes that leave the request open: the person may try again (with a fresh challenge).
const retry = {
  wrong_identity: "That passkey isn't for this account. Try another one.",
  assertion_invalid: "That passkey could not be checked. Try again.",
  user_not_verified: "Your device did not verify you (PIN, fingerprint or face). Try again.",
  challenge_expired: "That took too long. Try again.",
  link_changed: "The account changed meanwhile. Try again.",
};

async function load() {
  const data = await call("options", {});
  const outcome = data.outcome === "verified" ? "verified" : data.outcome === "wrong_identity" ? "wrong_identity" : data.code;
  if (data.outcome) {
    const [name, text] = closed[outcome] ?? ["failed", "This request cannot be confirmed here."];
    buttons(false);
    return state(name, text);
  }
  pending = data;
  $("partner").textContent = data.partner?.name || "An app";
  $("scope").textContent = data.scope;
  $("request").hidden = false;
  buttons(true);
  state("pending", data.link ? "Confirm with your passkey: this also links your account." : "Confirm with your passkey.");
}

async function act(run) {
  for (const id of ["confirm", "decline", "create"]) $(id).disabled = true;
  try {
    const data = await run();
    const outcome = data.outcome === "verified" || data.outcome === "wrong_identity" ? data.outcome : data.code;
    if (closed[outcome]) {
      buttons(false);
      message("");
      state(...closed[outcome]);
      // Back to the partner's return_url, which the server sends by a 303 (nothing appended to it).
      if (pending?.returns) location.assign(`/verify/return?request_id=${encodeURIComponent(requestID)}`);
      return;
    }
    message(retry[outcome] ?? "That did not work. Try again.", outcome || "failed");
  } catch (error) {
    message(error?.name === "NotAllowedError" ? "The passkey request was cancelled or timed out." : String(error?.message || error),
      error?.name || "error");
  }
  await load().catch((error) => message(String(error.message || error), "error"));
}

$("confirm").addEventListener("click", () => act(async () => {
  const credential = await navigator.credentials.get({ publicKey: parseRequestOptions(pending.options) });
  return call("complete", { challenge_id: pending.challenge_id, response: credentialToJSON(credential) });
}));

$("decline").addEventListener("click", () => act(() => call("decline", {})));

$("create").addEventListener("click", () => act(async () => {
  const started = await setup("id/options", {});
  const created = await navigator.credentials.create({ publicKey: parseCreationOptions(started.options) });
  await setup("id", { challenge_id: started.challenge_id, response: credentialToJSON(created) });
  const credential = await navigator.credentials.get({ publicKey: parseRequestOptions(pending.options) });
  return call("complete", { challenge_id: pending.challenge_id, response: credentialToJSON(credential) });
}));

load().catch((error) => {
  state("error", "This request could not be loaded.");
  message(String(error.message || error), "error");
});
