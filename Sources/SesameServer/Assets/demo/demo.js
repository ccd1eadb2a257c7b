// The demo page at /: sign up (account, session, passkey), sign in with a passkey (autofill where the browser has
// conditional mediation), sign out, and the account's passkeys with rename and delete, all through the browser SDK.
import { Sesame, SesameError, isConditionalMediationAvailable } from "{{sdk}}";

const sesame = new Sesame({ project: new URLSearchParams(location.search).get("project") || "default" });
const $ = (id) => document.getElementById(id);

// ---------------------------------------------------------------------------------------------------------------
// What the page shows

function show(kind, text, reason = "") {
  const message = $("message");
  message.hidden = !text;
  message.textContent = text;
  message.dataset.kind = kind;
  message.dataset.reason = reason;
}

function explain(error) {
  if (error.unknownCredential) {
    return "This passkey is no longer registered here (it was deleted), so it cannot sign in. Your browser was asked to forget it.";
  }
  switch (error.type) {
    case "user_reauthentication_required": return "Sign in again first: that needs a sign-in within the last 10 minutes.";
    case "general_unknown_origin": return `This project does not accept pages from ${location.origin}: add a web platform for ${location.hostname}.`;
    case "NotAllowedError": return "The passkey request was cancelled or timed out.";
    default: return error.message || String(error);
  }
}

function fail(error) {
  show("error", explain(error), error.unknownCredential ? "unknown-credential" : (error.type || "error"));
}

function passkeyItem(passkey) {
  const item = document.createElement("li");
  item.dataset.id = passkey.$id;
  const name = document.createElement("span");
  name.className = "name";
  name.textContent = passkey.name || "Unnamed passkey";
  const used = document.createElement("span");
  used.className = "used";
  used.textContent = passkey.accessedAt ? `Last used ${new Date(passkey.accessedAt).toLocaleString()}` : "Not used to sign in yet";
  const newName = document.createElement("input");
  newName.className = "new-name";
  newName.placeholder = "New name";
  newName.setAttribute("aria-label", `New name for ${name.textContent}`);
  const rename = button("Rename", "rename secondary", async () => {
    const text = newName.value.trim();
    if (!text) return show("error", "Type the new name first.", "empty_name");
    await sesame.account.updatePasskey(passkey.$id, text);
    show("info", "Passkey renamed.");
  });
  const remove = button("Delete", "delete", async () => {
    await sesame.account.deletePasskey(passkey.$id);
    show("info", "Passkey deleted: it can no longer sign in to this account.");
  });
  item.append(name, newName, rename, remove, used);
  return item;
}

function button(label, className, action) {
  const element = document.createElement("button");
  element.type = "button";
  element.className = className;
  element.textContent = label;
  element.addEventListener("click", () => run(action));
  return element;
}

async function refresh() {
  const user = await sesame.account.get();
  const status = $("status");
  $("guest").hidden = Boolean(user);
  $("account").hidden = !user;
  if (user) {
    status.textContent = `Signed in as ${user.email}`;
    status.dataset.state = "signed-in";
    $("passkeys").replaceChildren(...(await sesame.account.listPasskeys()).map(passkeyItem));
  } else {
    status.textContent = "Signed out";
    status.dataset.state = "guest";
    $("passkeys").replaceChildren();
  }
  document.body.dataset.ready = "true";
}

// One action at a time: buttons are off while it runs, and its outcome (or error) is shown.
async function run(action) {
  const buttons = [...document.querySelectorAll("button")];
  buttons.forEach((element) => { element.disabled = true; });
  try {
    await action();
    await refresh();
  } catch (error) {
    fail(error);
    await refresh().catch(() => {});
  } finally {
    buttons.forEach((element) => { element.disabled = false; });
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The controls

// The form is never sent anywhere (the CSP says form-action 'none'): submitting it (Enter, or #signup) signs up.
$("guest").addEventListener("submit", (event) => { event.preventDefault(); run(signUp); });

async function signUp() {
  const email = $("email").value.trim(), password = $("password").value;
  await sesame.account.create({ email, password });
  await sesame.account.createEmailPasswordSession({ email, password });
  try {
    await sesame.account.createPasskey({ name: "Passkey made on the demo page" });
  } catch (error) {
    throw new SesameError(`Signed up and signed in, but no passkey was added: ${explain(error)}`, { type: error.type });
  }
  $("password").value = "";
  show("info", "Signed up, with a passkey. Sign out, then sign in with it.");
}

$("signin").addEventListener("click", () => run(async () => {
  await sesame.account.signInWithPasskey();
  show("info", "Signed in with your passkey.");
}));

$("signout").addEventListener("click", () => run(async () => {
  await sesame.account.deleteSession("current");
  show("info", "Signed out.");
}));

$("addpasskey").addEventListener("click", () => run(async () => {
  await sesame.account.createPasskey({ name: "Another passkey" });
  show("info", "Passkey added.");
}));

// Autofill: once the email field has focus, a conditional request lets the person pick a passkey there. It is
// started on focus rather than on load, since each start counts toward the server's hourly sign-in limit.
let autofillPending = false;
$("email").addEventListener("focus", async () => {
  if (autofillPending || !$("account").hidden || !(await isConditionalMediationAvailable())) return;
  autofillPending = true;
  try {
    await sesame.account.signInWithPasskey({ conditional: true });
    show("info", "Signed in with your passkey.");
    await refresh();
  } catch (error) {
    if (error.type !== "AbortError") fail(error);
  } finally {
    autofillPending = false;
  }
});

// The bootstrap project's relying party is localhost, and 127.0.0.1 is another site to the browser (whose calls the
// project refuses): say where to go instead of failing.
if (location.hostname === "127.0.0.1" || location.hostname === "[::1]") {
  $("status").textContent = "Not on localhost";
  $("status").dataset.state = "wrong-host";
  show("error", `Passkeys of this project belong to localhost: open http://localhost:${location.port}/ instead.`, "not_localhost");
  document.body.dataset.ready = "true";
} else {
  refresh().catch(fail);
}
