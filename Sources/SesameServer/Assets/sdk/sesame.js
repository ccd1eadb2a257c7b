// Sesame browser SDK: passkeys for your own accounts through a Sesame server's Appwrite-compatible API (/v1), and
// Authsignal-style passkey sign-up and sign-in through its Authsignal-compatible client API (/authsignal/v1).
//
// An ES module written by hand: no dependencies, no build step. Load it from the server that serves it:
//
//   import { Sesame } from "https://sesame.example/sdk/sesame.js";
//   const sesame = new Sesame({ project: "default" });        // endpoint: that server's /v1
//   await sesame.account.create({ email, password });
//   await sesame.account.createEmailPasswordSession({ email, password });
//   await sesame.account.createPasskey({ name: "This laptop" });
//   await sesame.account.signInWithPasskey();                  // usernameless; { conditional: true } for autofill
//
//   import { Authsignal } from "https://sesame.example/sdk/sesame.js";
//   const authsignal = new Authsignal({ tenantId: "default" });   // baseUrl: that server's /authsignal/v1
//   const { data, error } = await authsignal.passkey.signUp({ token, username, displayName });  // token from track
//   const result = await authsignal.passkey.signIn({ action: "signInWithPasskey" });            // then validate it
//
// Sessions travel in the server's HttpOnly cookie (fetch with credentials), never in script-readable storage.

// ---------------------------------------------------------------------------------------------------------------
// base64url and the WebAuthn JSON forms

/** Encodes bytes (an ArrayBuffer or a view) as base64url without padding. */
export function base64urlEncode(bytes) {
  const view = bytes instanceof ArrayBuffer ? new Uint8Array(bytes) : new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let binary = "";
  for (const byte of view) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** Decodes base64url (padded or not) into an ArrayBuffer. */
export function base64urlDecode(text) {
  const base64 = text.replace(/-/g, "+").replace(/_/g, "/");
  const binary = atob(base64 + "===".slice((base64.length + 3) % 4));
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes.buffer;
}

const credentialDescriptors = (list) => (list ?? []).map((descriptor) => ({ ...descriptor, id: base64urlDecode(descriptor.id) }));

/** PublicKeyCredentialCreationOptionsJSON to the options of `navigator.credentials.create`, without the browser's parser. */
export function fallbackParseCreationOptions(json) {
  return {
    ...json,
    challenge: base64urlDecode(json.challenge),
    user: { ...json.user, id: base64urlDecode(json.user.id) },
    excludeCredentials: credentialDescriptors(json.excludeCredentials),
  };
}

/** PublicKeyCredentialRequestOptionsJSON to the options of `navigator.credentials.get`, without the browser's parser. */
export function fallbackParseRequestOptions(json) {
  return { ...json, challenge: base64urlDecode(json.challenge), allowCredentials: credentialDescriptors(json.allowCredentials) };
}

/** A credential as RegistrationResponseJSON or AuthenticationResponseJSON, without the browser's `toJSON`. */
export function fallbackCredentialToJSON(credential) {
  const response = credential.response;
  const json = {
    id: credential.id,
    rawId: base64urlEncode(credential.rawId),
    type: credential.type,
    authenticatorAttachment: credential.authenticatorAttachment ?? undefined,
    clientExtensionResults: credential.getClientExtensionResults?.() ?? {},
    response: { clientDataJSON: base64urlEncode(response.clientDataJSON) },
  };
  if ("attestationObject" in response) {
    json.response.attestationObject = base64urlEncode(response.attestationObject);
    json.response.transports = response.getTransports?.() ?? [];
  } else {
    json.response.authenticatorData = base64urlEncode(response.authenticatorData);
    json.response.signature = base64urlEncode(response.signature);
    json.response.userHandle = response.userHandle ? base64urlEncode(response.userHandle) : undefined;
  }
  return json;
}

const nativeJSON = () => typeof PublicKeyCredential !== "undefined" && typeof PublicKeyCredential.parseCreationOptionsFromJSON === "function";

/** The browser's `PublicKeyCredential.parseCreationOptionsFromJSON` where it has one, else the fallback. */
export function parseCreationOptions(json) {
  return nativeJSON() ? PublicKeyCredential.parseCreationOptionsFromJSON(json) : fallbackParseCreationOptions(json);
}

/** The browser's `PublicKeyCredential.parseRequestOptionsFromJSON` where it has one, else the fallback. */
export function parseRequestOptions(json) {
  return nativeJSON() ? PublicKeyCredential.parseRequestOptionsFromJSON(json) : fallbackParseRequestOptions(json);
}

/** The credential's own `toJSON()` where the browser has it, else the fallback. */
export function credentialToJSON(credential) {
  return typeof credential.toJSON === "function" ? credential.toJSON() : fallbackCredentialToJSON(credential);
}

// ---------------------------------------------------------------------------------------------------------------
// Browser capabilities and the Signal API (each call does nothing where the browser lacks it)

/** Whether the browser offers passkeys in autofill (conditional mediation). */
export async function isConditionalMediationAvailable() {
  return typeof PublicKeyCredential !== "undefined" && typeof PublicKeyCredential.isConditionalMediationAvailable === "function"
    && await PublicKeyCredential.isConditionalMediationAvailable();
}

async function signal(method, options) {
  if (typeof PublicKeyCredential === "undefined" || typeof PublicKeyCredential[method] !== "function") return false;
  try {
    await PublicKeyCredential[method](options);
    return true;
  } catch {
    return false;
  }
}

/** Tells the browser the relying party does not know this credential, so its passkey manager may remove it. */
export const signalUnknownCredential = ({ rpId, credentialId }) => signal("signalUnknownCredential", { rpId, credentialId });
/** Tells the browser which of a user's credentials the relying party still accepts. */
export const signalAllAcceptedCredentials = ({ rpId, userId, allAcceptedCredentialIds }) =>
  signal("signalAllAcceptedCredentials", { rpId, userId, allAcceptedCredentialIds });
/** Tells the browser the user's current name and display name, to update its passkeys' labels. */
export const signalCurrentUserDetails = ({ rpId, userId, name, displayName }) =>
  signal("signalCurrentUserDetails", { rpId, userId, name, displayName });

// One WebAuthn request at a time: a pending conditional (autofill) request is aborted before any other ceremony.
let pendingConditional = null;

async function cancelConditional() {
  const pending = pendingConditional;
  pendingConditional = null;
  if (!pending) return;
  pending.controller.abort();
  await pending.settled;
}

// ---------------------------------------------------------------------------------------------------------------
// The client

/** An error answer of the server (Appwrite's shape), or a ceremony the browser refused. */
export class SesameError extends Error {
  constructor(message, { status = 0, type = "", code = 0, unknownCredential = false, cause } = {}) {
    super(message, cause ? { cause } : undefined);
    this.name = "SesameError";
    /** The HTTP status (0 when no answer came). */
    this.status = status;
    /** Appwrite's error type, such as `user_passkey_invalid`. */
    this.type = type;
    this.code = code;
    /** Whether the server did not know the passkey used (deleted, or never registered here). */
    this.unknownCredential = unknownCredential;
  }
}

/** A Sesame server: `new Sesame({ endpoint, project })`; the endpoint defaults to the /v1 of the server this module came from. */
export class Sesame {
  constructor({ endpoint = new URL("/v1", import.meta.url).href, project = "default" } = {}) {
    this.endpoint = endpoint.replace(/\/+$/, "");
    this.project = project;
    this.account = new Account(this);
  }

  /** Calls the API: JSON in and out, the session cookie included. Throws SesameError on an error answer. */
  async call(method, path, body) {
    const headers = { "X-Appwrite-Project": this.project, "X-Appwrite-Response-Format": "1.6.0" };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    let response;
    try {
      response = await fetch(this.endpoint + path, {
        method, headers, credentials: "include", body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (cause) {
      throw new SesameError("The server could not be reached.", { cause });
    }
    const text = await response.text();
    let data = null;
    try {
      data = text ? JSON.parse(text) : null;
    } catch {
      data = null;
    }
    if (!response.ok) {
      throw new SesameError(data?.message ?? `HTTP ${response.status}`, {
        status: response.status, type: data?.type ?? "", code: data?.code ?? response.status,
        unknownCredential: response.headers.get("X-Sesame-Unknown-Credential") === "true",
      });
    }
    return data;
  }
}

/** The signed-in person's account: Appwrite's `Account` service, passkeys included. */
class Account {
  constructor(client) {
    this.client = client;
  }

  /** Signs up (does not sign in). */
  create({ userId = "unique()", email, password, name }) {
    return this.client.call("POST", "/account", { userId, email, password, name });
  }

  /** Signs in with email and password; the server sets the session cookie. */
  createEmailPasswordSession({ email, password }) {
    return this.client.call("POST", "/account/sessions/email", { email, password });
  }

  /** The signed-in user, or null for a guest. */
  async get() {
    try {
      return await this.client.call("GET", "/account");
    } catch (error) {
      if (error.status === 401) return null;
      throw error;
    }
  }

  /** Signs out (the current session by default). */
  deleteSession(sessionId = "current") {
    return this.client.call("DELETE", `/account/sessions/${encodeURIComponent(sessionId)}`, {});
  }

  /** The account's passkeys: `[{ $id, name, $createdAt, accessedAt, ... }]`. */
  async listPasskeys() {
    return (await this.client.call("GET", "/account/passkeys")).passkeys;
  }

  /** Renames a passkey. */
  updatePasskey(passkeyId, name) {
    return this.client.call("PATCH", `/account/passkeys/${encodeURIComponent(passkeyId)}`, { name });
  }

  /** Deletes a passkey (needs a sign-in within the last 10 minutes). */
  deletePasskey(passkeyId) {
    return this.client.call("DELETE", `/account/passkeys/${encodeURIComponent(passkeyId)}`, {});
  }

  /**
   * Registers a passkey for the signed-in account: start, `navigator.credentials.create`, finish. With
   * `conditional: true` the browser creates it without a prompt where it can (the automatic upgrade after a
   * password sign-in) and fails quietly where it cannot. An AbortSignal `signal` gives the ceremony up.
   */
  async createPasskey({ name, conditional = false, signal } = {}) {
    await cancelConditional();
    const start = await this.client.call("POST", "/account/passkeys", name ? { name } : {});
    const credential = await ceremony(() => navigator.credentials.create({
      publicKey: parseCreationOptions(start.publicKey), ...(conditional ? { mediation: "conditional" } : {}), ...(signal ? { signal } : {}),
    }));
    return this.client.call("PUT", `/account/passkeys/${encodeURIComponent(start.passkeyId)}/verification`,
      { credential: credentialToJSON(credential) });
  }

  /**
   * After a password sign-in: offers the browser to add a passkey without a prompt (conditional create); true when
   * one was added. A browser may hold a conditional create without ever answering (Chromium does when its password
   * manager has no reason to upgrade), so the offer is given up after `wait` milliseconds: false then, and the app
   * may offer `createPasskey()` with a prompt instead.
   */
  async upgradeToPasskey({ name, wait = 5000 } = {}) {
    if (typeof PublicKeyCredential === "undefined" || typeof PublicKeyCredential.getClientCapabilities !== "function") return false;
    const capabilities = await PublicKeyCredential.getClientCapabilities();
    if (!capabilities.conditionalCreate) return false;
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), wait);
    try {
      await this.createPasskey({ name, conditional: true, signal: controller.signal });
      return true;
    } catch {
      return false;
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Signs in with a passkey, usernameless: start, `navigator.credentials.get`, finish, then the session. With
   * `conditional: true` the request waits for the person to pick a passkey in autofill (an input with
   * `autocomplete="username webauthn"`) and is aborted by any other ceremony. A passkey the server does not know
   * (deleted) is reported to the browser (`signalUnknownCredential`) and throws with `unknownCredential` set.
   */
  async signInWithPasskey({ conditional = false } = {}) {
    await cancelConditional();
    const start = await this.client.call("POST", "/account/tokens/passkey", {});
    const credential = await ceremony(() => getCredential(parseRequestOptions(start.publicKey), conditional));
    let token;
    try {
      token = await this.client.call("PUT", "/account/tokens/passkey", { challengeId: start.$id, credential: credentialToJSON(credential) });
    } catch (error) {
      if (error.unknownCredential) await signalUnknownCredential({ rpId: start.publicKey.rpId, credentialId: credential.id });
      throw error;
    }
    return this.client.call("POST", "/account/sessions/token", { userId: token.userId, secret: token.secret });
  }
}

/**
 * `navigator.credentials.get`; with `conditional` through autofill (conditional mediation), as the one pending
 * conditional request that any other ceremony aborts first.
 */
async function getCredential(publicKey, conditional) {
  if (!conditional) return navigator.credentials.get({ publicKey });
  const controller = new AbortController();
  const request = navigator.credentials.get({ publicKey, mediation: "conditional", signal: controller.signal });
  const mine = { controller, settled: request.then(() => {}, () => {}) };
  pendingConditional = mine;
  try {
    return await request;
  } finally {
    if (pendingConditional === mine) pendingConditional = null;
  }
}

/** Runs a WebAuthn call; a refusal (cancelled, timed out, aborted, not allowed) becomes a SesameError. */
async function ceremony(run) {
  try {
    const credential = await run();
    if (!credential) throw new SesameError("The browser returned no passkey.");
    return credential;
  } catch (error) {
    if (error instanceof SesameError) throw error;
    throw new SesameError(error?.name === "AbortError" ? "The passkey request was cancelled." : "The browser refused the passkey request.", {
      type: error?.name ?? "", cause: error,
    });
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Authsignal-style passkeys: the client API under /authsignal/v1/client, with the web Authsignal SDK's shapes

/** `{ error, errorCode, errorDescription }`, the web Authsignal SDK's failed AuthsignalResponse. */
function authsignalError(code, description) {
  return { error: code, errorCode: code, errorDescription: description };
}

/**
 * The passkey part of Authsignal's web SDK against a Sesame server: `new Authsignal({ tenantId, baseUrl })`, then
 * `authsignal.passkey.signUp(...)` and `.signIn(...)`. Answers are the SDK's `AuthsignalResponse`: `{ data }`, or
 * `{ error, errorCode, errorDescription }` with the server's code; a passkey prompt the browser refuses throws, as
 * Authsignal's does. The tenant ID is the project's ID; `baseUrl` defaults to the /authsignal/v1 of the server this
 * module came from.
 */
export class Authsignal {
  constructor({ tenantId, baseUrl = new URL("/authsignal/v1", import.meta.url).href } = {}) {
    if (!tenantId) throw new Error("tenantId is required");
    this.tenantId = tenantId;
    this.baseUrl = baseUrl.replace(/\/+$/, "");
    /** The cached token: set by `setToken`, replaced by each result token (a later `signUp()` may then omit it). */
    this.token = undefined;
    this.passkey = new AuthsignalPasskey(this);
  }

  /** Caches a token from the backend's `track` for the next call that needs one. */
  setToken(token) {
    if (token) this.token = token;
  }

  /**
   * POSTs to the client API with a Bearer `token`, or the tenant's Basic header as the web SDK sends it
   * (`btoa(encodeURIComponent(tenantId))`, no colon). Returns the JSON answer or an `authsignalError`.
   */
  async call(path, { token, body = {} } = {}) {
    const headers = {
      "Content-Type": "application/json",
      Authorization: token ? `Bearer ${token}` : `Basic ${btoa(encodeURIComponent(this.tenantId))}`,
    };
    let response;
    try {
      response = await fetch(`${this.baseUrl}/client${path}`, { method: "POST", headers, body: JSON.stringify(body), credentials: "omit" });
    } catch {
      return authsignalError("network_error", "The server could not be reached.");
    }
    const data = await response.json().catch(() => null);
    if (data === null || typeof data !== "object") return authsignalError("network_error", `HTTP ${response.status} without a JSON body`);
    if (!response.ok || "error" in data) {
      const code = data.errorCode ?? data.error ?? "api_error";
      return authsignalError(code, data.errorDescription || `HTTP ${response.status}`);
    }
    return data;
  }
}

/** `authsignal.passkey`: sign-up with a track token, sign-in with an action (usernameless) or a token (step-up). */
class AuthsignalPasskey {
  constructor(client) {
    this.client = client;
  }

  /**
   * Creates a passkey for the user of `token` (from the backend's `track`; the cached token by default):
   * registration options, `navigator.credentials.create`, then the server's check. `data.token` is the result token
   * for the backend's `validate`.
   */
  async signUp({ token, username, displayName, authenticatorAttachment = "platform" } = {}) {
    const userToken = token ?? this.client.token;
    if (!userToken) return authsignalError("token_not_set", "A token has not been set. Call 'setToken' first.");
    const options = await this.client.call("/user-authenticators/passkey/registration-options",
      { token: userToken, body: { username, displayName, authenticatorAttachment } });
    if ("error" in options) return options;
    await cancelConditional();
    const registrationResponse = credentialToJSON(await navigator.credentials.create({ publicKey: parseCreationOptions(options.options) }));
    const added = await this.client.call("/user-authenticators/passkey", {
      token: userToken, body: { challengeId: options.challengeId, registrationCredential: registrationResponse, conditionalCreate: false },
    });
    if ("error" in added) return added;
    if (added.accessToken) this.client.token = added.accessToken;
    return { data: { token: added.accessToken, userAuthenticator: added.userAuthenticator, registrationResponse } };
  }

  /**
   * Signs in with a passkey: with `action` usernameless (the server creates the action; the user is whoever's passkey
   * answers), with `token` as the tracked user (step-up), with `autofill` through the browser's autofill. `data`
   * carries `isVerified`, the result `token`, `userId`, `userAuthenticatorId`, `username` and `displayName`. A passkey
   * the server does not know is reported to the browser (`signalUnknownCredential`).
   */
  async signIn({ action, token, autofill = false } = {}) {
    if (token && autofill) throw new Error("autofill is not supported when providing a token");
    if (action && token) throw new Error("action is not supported when providing a token");
    let challengeId;
    if (action) {
      const challenge = await this.client.call("/challenge", { body: { action } });
      if ("error" in challenge) return challenge;
      challengeId = challenge.challengeId;
    }
    const options = await this.client.call("/user-authenticators/passkey/authentication-options",
      { token, body: challengeId ? { challengeId } : {} });
    if ("error" in options) return options;
    await cancelConditional();
    const authenticationResponse = credentialToJSON(await getCredential(parseRequestOptions(options.options), autofill));
    const verified = await this.client.call("/verify/passkey",
      { token, body: { challengeId: options.challengeId, authenticationCredential: authenticationResponse } });
    if ("error" in verified) {
      if (verified.errorCode === "unknown_credential") {
        await signalUnknownCredential({ rpId: options.options.rpId ?? location.hostname, credentialId: authenticationResponse.id });
      }
      return verified;
    }
    if (verified.accessToken) this.client.token = verified.accessToken;
    const { isVerified, accessToken, userId, userAuthenticatorId, username, userDisplayName } = verified;
    return { data: { isVerified, token: accessToken, userId, userAuthenticatorId, username, displayName: userDisplayName, authenticationResponse } };
  }
}
