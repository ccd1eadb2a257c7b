// The hosted setup page, /app/account/passkey (`setup_url` of inline verification): sign in with a passkey or create
// an ID (a person and their first passkey in one step), then add passkeys. It talks to /app/api/*; the session is an
// HttpOnly cookie this script never sees.
import { parseCreationOptions, parseRequestOptions, credentialToJSON } from "{{sdk}}";

const $ = (id) => document.getElementById(id);

class PageError extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

async function call(method, path, body) {
  const response = await fetch(`/app/api/${path}`, {
    method, credentials: "same-origin", referrerPolicy: "no-referrer",
    headers: body === undefined ? {} : { "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const answer = await response.json().catch(() => null);
  if (!response.ok) throw new PageError(answer?.error?.code || `http_${response.status}`, answer?.error?.message || "The server could not answer.");
  return answer.data.data;
}

function message(text, code = "") {
  $("message").hidden = !text;
  $("message").textContent = text;
  $("message").dataset.reason = code;
}

function render(account, { done = false } = {}) {
  $("guest").hidden = Boolean(account);
  $("account").hidden = !account;
  $("status").dataset.state = account ? "signed-in" : "signed-out";
  $("status").textContent = account ? `Signed in as ${account.name}` : "Signed out";
  if (account) {
    $("idname").textContent = account.name;
    $("passkeys").replaceChildren(...account.passkeys.map((passkey, index) => {
      const item = document.createElement("li");
      const name = document.createElement("span");
      name.className = "name";
      name.textContent = passkey.name || `Passkey ${index + 1}`;
      const used = document.createElement("span");
      used.className = "used";
      used.textContent = `added ${new Date(passkey.created_at).toLocaleString()}`
        + (passkey.last_used_at ? `, last used ${new Date(passkey.last_used_at).toLocaleString()}` : "");
      item.append(name, used);
      return item;
    }));
  }
  $("done").hidden = !(account && done);
  document.body.dataset.ready = "true";
}

async function load() {
  try {
    render(await call("GET", "account"));
  } catch (error) {
    if (error.code !== "session_required") message(error.message, error.code);
    render(null);
  }
}

// Runs a step with every button disabled; a refused passkey prompt or an error answer becomes the message.
async function act(step) {
  const buttons = document.querySelectorAll("button");
  buttons.forEach((button) => { button.disabled = true; });
  message("");
  try {
    await step();
  } catch (error) {
    if (error?.code === "session_required") render(null);
    const text = error instanceof PageError ? error.message
      : error?.name === "InvalidStateError" ? "This device has a passkey for this ID already."
      : error?.name === "NotAllowedError" ? "The passkey request was cancelled or timed out." : String(error?.message || error);
    message(text, error?.code || error?.name || "error");
  } finally {
    buttons.forEach((button) => { button.disabled = false; });
  }
}

async function register(start, finish) {
  const started = await call("POST", start, {});
  const credential = await navigator.credentials.create({ publicKey: parseCreationOptions(started.options) });
  render(await call("POST", finish, { challenge_id: started.challenge_id, response: credentialToJSON(credential) }), { done: true });
}

$("create").addEventListener("click", () => act(() => register("id/options", "id")));
$("add").addEventListener("click", () => act(() => register("passkeys/options", "passkeys")));

$("signin").addEventListener("click", () => act(async () => {
  const started = await call("POST", "sign-in/options", {});
  const credential = await navigator.credentials.get({ publicKey: parseRequestOptions(started.options) });
  render(await call("POST", "sign-in", { challenge_id: started.challenge_id, response: credentialToJSON(credential) }), { done: true });
}));

$("signout").addEventListener("click", () => act(async () => {
  await call("POST", "sign-out", {});
  render(null);
}));

load();
