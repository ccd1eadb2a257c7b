// The inline-passkey frame of <botshield-verify>, /frame/inline-passkey?site_key=…#request_id=…&origin=…
//
// It runs the passkey itself (passkey-options, navigator.credentials.get, passkey-complete); the partner's page never
// sees options, challenge or assertion. It tells its parent only the outcome, as {type: "botshield:inline", outcome},
// and only to the parent's origin: the one the widget names in the fragment, if it is one of the site key's origins
// (which the server wrote into the page, and which alone may frame it) and, where the browser says who the parent is,
// that parent.
import { parseRequestOptions, credentialToJSON } from "{{sdk}}";

const fragment = new URLSearchParams(location.hash.slice(1));
const requestID = fragment.get("request_id") || "";
const claimed = fragment.get("origin") || "";
const allowed = (document.documentElement.dataset.origins || "").split(" ").filter(Boolean);
const parentOrigin = location.ancestorOrigins?.[0];
const target = allowed.includes(claimed) && (parentOrigin === undefined || parentOrigin === claimed) ? claimed : null;
const state = document.getElementById("state");

function show(name, text) {
  state.dataset.state = name;
  state.textContent = text;
}

function tell(outcome) {
  if (target && window.parent !== window) window.parent.postMessage({ type: "botshield:inline", outcome }, target);
}

async function call(path, body) {
  const response = await fetch(`/operations/request/${path}`, {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
    credentials: "omit", referrerPolicy: "no-referrer",
  });
  const answer = await response.json();
  if (answer?.data?.error) throw new Error(answer.data.error.message || "error");
  return answer.data.data;
}

async function run() {
  if (!target) throw new Error("not framed by a registered origin");
  if (!window.PublicKeyCredential) throw new Error("passkeys are not supported here");
  const options = await call("passkey-options", { request_id: requestID });
  if (!options.options) return options.outcome || "fallback";
  const credential = await navigator.credentials.get({ publicKey: parseRequestOptions(options.options) });
  const result = await call("passkey-complete", {
    request_id: requestID, challenge_id: options.challenge_id, response: credentialToJSON(credential),
  });
  return result.outcome || "failed";
}

run().then((outcome) => {
  show(outcome === "verified" ? "verified" : "fallback", outcome === "verified" ? "Confirmed." : "Use the QR code instead.");
  tell(outcome);
}, () => {
  show("fallback", "Use the QR code instead.");
  tell("failed");
});
