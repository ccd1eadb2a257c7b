"""The hosted setup page, /app/account/passkey (setup_url), and what its passkeys do on the hand-off page, in headless
Chromium with a virtual authenticator; then the browser SDK's automatic passkey upgrade after a password sign-in.

A new visitor creates an ID (a person and a passkey in one step), signs out, signs back in with the passkey, adds a
second passkey from another authenticator; an unlinked hand-off request completes with a passkey made here; a
link: true request links the partner's ref to the person; a second ID is created, and a linked request of the first
person answered by the second person's passkey says "that passkey isn't for this account" and stays pending, then the
right passkey confirms it. The partner's server reads every outcome with its API key. Last, the SDK's Authsignal-style
passkeys: a sign-up with a track token from the server API, a sign-in with an action and a step-up with a token,
each validated by the server with the tenant secret.

Environment: SESAME_URL (http://localhost:PORT/), SESAME_SCREENSHOTS, SESAME_BACKEND (a tag for the screenshots),
SESAME_PARTNER_KEY (a test key of a partner of the ID project), SESAME_AUTHSIGNAL_SECRET (a tenant secret of the
project default).
"""
import base64
import json
import os
import re
import time
import urllib.error
import urllib.request

from browser import check, main, partner_call, token_claims

URL = os.environ["SESAME_URL"]
KEY = os.environ["SESAME_PARTNER_KEY"]
TAG = os.environ.get("SESAME_BACKEND", "run")
SETUP = f"{URL}app/account/passkey"
ID_NAME = re.compile(r"^Sesame ID •[0-9a-f]{4}$")
AUTHENTICATOR = {"protocol": "ctap2", "transport": "internal", "hasResidentKey": True, "hasUserVerification": True,
                 "isUserVerified": True, "automaticPresenceSimulation": True}
state = {}


def api(path, body=None, bearer=KEY):
    """A call of the partner's server; the `data.data` of the answer."""
    return partner_call(URL, path, body, bearer)


def authsignal(path, body):
    """A call of the Authsignal-compatible server API with the tenant secret (Basic, empty password)."""
    secret = base64.b64encode((os.environ["SESAME_AUTHSIGNAL_SECRET"] + ":").encode()).decode()
    request = urllib.request.Request(URL.rstrip("/") + "/authsignal/v1" + path, method="POST", data=json.dumps(body).encode(),
                                     headers={"Authorization": f"Basic {secret}", "Content-Type": "application/json"})
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(request, timeout=10) as response:
        return json.load(response)


def in_page(browser, body, *arguments):
    """Runs `body` (an async function body with `Authsignal` and `args` in scope) in the page; its JSON result."""
    browser.driver.set_script_timeout(30)
    return browser.driver.execute_async_script("""
        const done = arguments[arguments.length - 1], args = Array.from(arguments).slice(0, -1);
        import(new URL("/sdk/sesame.js", location.href).href)
          .then(async ({ Authsignal }) => { %s })
          .then((value) => done(JSON.parse(JSON.stringify(value ?? null))), (error) => done({ thrown: String(error && (error.message || error)) }));
        """ % body, *arguments)


def new_request(**fields):
    grant = api("/operations/sdk/create-session", {})["anchor_grant_token"]
    return api("/operations/sdk/create-verification-link", fields, bearer=grant)["request_id"]


def status(request_id):
    return api(f"/operations/verification/status?request_id={request_id}")


def ready(browser):
    browser.wait(lambda b: b.driver.execute_script("return document.body.dataset.ready === 'true'"), "the page to be ready")


def idle(browser):
    browser.wait(lambda b: all(button.is_enabled() for button in b.elements("button")), "the action to finish")


def page_state(browser):
    return browser.element("#status").get_attribute("data-state")


def signed_in_as(browser, name):
    browser.wait(lambda b: b.text("#status") == f"Signed in as {name}", f"#status to say signed in as {name}")
    idle(browser)


def passkeys(browser):
    return browser.elements("#passkeys li")


def fetch(browser, method, path):
    """A call from the page itself (its origin, its cookies): status and JSON."""
    browser.driver.set_script_timeout(10)
    return browser.driver.execute_async_script("""
        const [method, path, done] = arguments;
        fetch(path, { method, headers: { "Content-Type": "application/json" }, body: method === "GET" ? undefined : "{}" })
          .then(async (r) => done([r.status, await r.json()]), (e) => done([0, String(e)]));""", method, path)


def handoff(browser, request_id):
    browser.open(f"{URL}verify?request_id={request_id}")
    browser.wait(lambda b: b.driver.execute_script("return document.body.dataset.ready === 'true'"), "the hand-off page")
    browser.wait(lambda b: b.element("#state").get_attribute("data-state") == "pending", "a pending request")


def handoff_state(browser):
    return browser.element("#state").get_attribute("data-state")


def base64url(standard):
    return standard.replace("+", "-").replace("/", "_").rstrip("=")


@check("the setup page loads signed out with 'Sign in with a passkey' and 'Create your ID'")
def loads(browser):
    browser.open(SETUP)
    ready(browser)
    assert page_state(browser) == "signed-out" and browser.text("#status") == "Signed out", browser.text("#status")
    assert browser.element("#signin").is_displayed() and browser.element("#create").is_displayed()
    assert not browser.element("#add").is_displayed() and not browser.element("#signout").is_displayed()
    browser.screenshot(f"setup-{TAG}-1-signed-out")


@check("Create your ID: one ceremony makes the person and a resident passkey named '<Brand> ID •xxxx'; an HttpOnly cookie on /app")
def create_id(browser):
    browser.element("#create").click()
    browser.wait(lambda b: page_state(b) == "signed-in", "the new ID")
    idle(browser)
    name = browser.text("#idname")
    assert ID_NAME.match(name), name
    assert browser.text("#status") == f"Signed in as {name}" and len(passkeys(browser)) == 1
    assert browser.element("#done").is_displayed() and "return to the app" in browser.text("#done")
    credentials = browser.credentials()
    assert len(credentials) == 1 and credentials[0]["rpId"] == "localhost" and credentials[0]["isResidentCredential"], credentials
    user_handle = base64.b64decode(credentials[0]["userHandle"])
    assert len(user_handle) == 32, len(user_handle)
    cookies = {cookie["name"]: cookie for cookie in browser.driver.get_cookies()}
    cookie = cookies.get("sesame_app_session")
    assert cookie and cookie["httpOnly"] and not cookie["secure"] and cookie.get("sameSite") == "Lax" and cookie["path"] == "/app", cookies
    assert not browser.driver.execute_script("return document.cookie").count("sesame_app_session"), "the script cannot read it"
    state["name"], state["first"] = name, credentials[0]["credentialId"]
    browser.screenshot(f"setup-{TAG}-2-created")


@check("sign out ends the session (the account call is 401 session_required); sign in with the passkey opens a new one")
def sign_out_in(browser):
    browser.element("#signout").click()
    browser.wait(lambda b: page_state(b) == "signed-out", "signed out")
    code, answer = fetch(browser, "GET", "/app/api/account")
    assert code == 401 and answer["error"]["code"] == "session_required", (code, answer)
    browser.element("#signin").click()
    signed_in_as(browser, state["name"])
    assert len(passkeys(browser)) == 1 and "last used" in passkeys(browser)[0].text, passkeys(browser)[0].text
    browser.screenshot(f"setup-{TAG}-3-signed-in")


@check("add a passkey from a second authenticator (the first holds an excluded credential): two passkeys, the second signs in")
def add_passkey(browser):
    first = browser.authenticator
    saved = browser.credentials()
    browser.cdp("WebAuthn.removeVirtualAuthenticator", {"authenticatorId": first})
    browser.authenticator = browser.cdp("WebAuthn.addVirtualAuthenticator", {"options": AUTHENTICATOR})["authenticatorId"]
    browser.element("#add").click()
    browser.wait(lambda b: len(passkeys(b)) == 2, "two passkeys")
    idle(browser)
    second = browser.credentials()
    assert len(second) == 1 and second[0]["credentialId"] != state["first"] and second[0]["userHandle"] == saved[0]["userHandle"], second
    browser.screenshot(f"setup-{TAG}-4-two-passkeys")
    # A second device of the same person (an authenticator keeps one discoverable credential per user handle, so the
    # first one's passkey stays on the first, removed, device): it signs in too.
    state["second"] = second[0]["credentialId"]
    browser.element("#signout").click()
    browser.wait(lambda b: page_state(b) == "signed-out", "signed out")
    browser.element("#signin").click()
    signed_in_as(browser, state["name"])


@check("the hand-off page's unlinked request completes with a passkey made on the setup page (linked: false)")
def unlinked(browser):
    request_id = new_request(scope="login")
    handoff(browser, request_id)
    browser.element("#confirm").click()
    browser.wait(lambda b: handoff_state(b) == "verified", "the confirmation")
    answer = status(request_id)
    assert answer["status"] == "completed" and token_claims(answer["verification_token"])["linked"] is False, answer
    browser.screenshot(f"setup-{TAG}-5-handoff-unlinked")


@check("link: true on the hand-off page links the partner's ref to this person; inline passkey-options then lists both passkeys")
def link(browser):
    request_id = new_request(scope="secure_account", partner_user_ref="acct_setup", link=True)
    handoff(browser, request_id)
    browser.element("#confirm").click()
    browser.wait(lambda b: handoff_state(b) == "verified", "the confirmation")
    assert token_claims(status(request_id)["verification_token"])["linked"] is True
    options = api("/operations/request/passkey-options", {"request_id": new_request(scope="checkout", partner_user_ref="acct_setup")})
    allowed = sorted(entry["id"] for entry in options["options"]["allowCredentials"])
    assert allowed == sorted([base64url(state["first"]), base64url(state["second"])]), (allowed, options)


@check("a second visitor creates another ID on the same device: another person, another name")
def second_id(browser):
    browser.open(SETUP)
    ready(browser)
    browser.element("#signout").click()
    browser.wait(lambda b: page_state(b) == "signed-out", "signed out")
    before = {credential["credentialId"] for credential in browser.credentials()}
    browser.element("#create").click()
    browser.wait(lambda b: page_state(b) == "signed-in", "the second ID")
    idle(browser)
    other = browser.text("#idname")
    assert ID_NAME.match(other) and other != state["name"], other
    made = [credential for credential in browser.credentials() if credential["credentialId"] not in before]
    assert len(made) == 1, made
    state["other"] = made[0]["credentialId"]


@check("wrong identity: the linked request answered by another person's passkey says so and stays pending; the right one confirms")
def wrong_identity(browser):
    request_id = new_request(scope="transfer", partner_user_ref="acct_setup")
    # The page asks for the linked person's passkeys; this browser is made to answer with the other person's (a client
    # that ignores allowCredentials), so the server sees a genuine assertion of someone else.
    script = browser.cdp("Page.addScriptToEvaluateOnNewDocument", {"source": """
        (() => {
          const other = %s;
          const original = navigator.credentials.get.bind(navigator.credentials);
          const bytes = (text) => Uint8Array.from(atob(text.replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0));
          navigator.credentials.get = (options) => {
            if (options && options.publicKey) options.publicKey.allowCredentials = [{ type: "public-key", id: bytes(other) }];
            return original(options);
          };
        })();""" % json.dumps(state["other"])})["identifier"]
    handoff(browser, request_id)
    browser.element("#confirm").click()
    browser.wait(lambda b: b.element("#message").get_attribute("data-reason") == "wrong_identity", "the wrong-identity message")
    assert "that passkey isn't for this account" in browser.text("#message").lower(), browser.text("#message")
    browser.wait(lambda b: handoff_state(b) == "pending" and b.element("#confirm").is_enabled(), "the request to stay open")
    assert status(request_id)["status"] == "pending"
    browser.screenshot(f"setup-{TAG}-6-wrong-identity")
    browser.cdp("Page.removeScriptToEvaluateOnNewDocument", {"identifier": script})
    handoff(browser, request_id)
    browser.element("#confirm").click()
    browser.wait(lambda b: handoff_state(b) == "verified", "the confirmation with the right passkey")
    answer = status(request_id)
    assert answer["status"] == "completed" and token_claims(answer["verification_token"])["linked"] is True, answer


@check("Create your ID on the hand-off page: a new visitor makes the person and the passkey there, and it confirms the unlinked request")
def handoff_create(browser):
    # A new visitor: a device without any passkey.
    browser.cdp("WebAuthn.removeVirtualAuthenticator", {"authenticatorId": browser.authenticator})
    browser.authenticator = browser.cdp("WebAuthn.addVirtualAuthenticator", {"options": AUTHENTICATOR})["authenticatorId"]
    linked_request = new_request(scope="checkout", partner_user_ref="acct_setup")
    handoff(browser, linked_request)
    assert not browser.element("#create").is_displayed(), "a linked request is its person's to confirm"
    request_id = new_request(scope="login")
    handoff(browser, request_id)
    assert browser.element("#create").is_displayed()
    browser.element("#create").click()
    browser.wait(lambda b: handoff_state(b) == "verified", "the confirmation with the new ID")
    credentials = browser.credentials()
    assert len(credentials) == 1 and credentials[0]["isResidentCredential"], credentials
    answer = status(request_id)
    assert answer["status"] == "completed" and token_claims(answer["verification_token"])["linked"] is False, answer
    browser.screenshot(f"setup-{TAG}-9-handoff-create")


@check("upgradeToPasskey after a password sign-in: a conditional create where Chromium completes one, else false in time and the prompted fallback")
def upgrade(browser):
    browser.open(URL)
    browser.wait(lambda b: b.driver.execute_script("return document.body.dataset.ready === 'true'"), "the demo page")
    before = len(browser.credentials())
    browser.driver.set_script_timeout(40)
    result = browser.driver.execute_async_script("""
        const done = arguments[arguments.length - 1];
        (async () => {
          const { Sesame } = await import(new URL("/sdk/sesame.js", location.href).href);
          const sesame = new Sesame({ project: "default" });
          const email = `upgrade.${Date.now()}@example.org`, password = "correct horse battery";
          await sesame.account.create({ email, password });
          await sesame.account.createEmailPasswordSession({ email, password });
          const capabilities = typeof PublicKeyCredential.getClientCapabilities === "function"
            ? await PublicKeyCredential.getClientCapabilities() : {};
          const upgraded = await sesame.account.upgradeToPasskey({ name: "Upgraded", wait: 3000 });
          const listed = (await sesame.account.listPasskeys()).length;
          // The fallback an app offers when there was no upgrade: an ordinary, prompted registration.
          if (!upgraded) await sesame.account.createPasskey({ name: "Asked" });
          const after = (await sesame.account.listPasskeys()).map((p) => p.name);
          return { conditionalCreate: Boolean(capabilities.conditionalCreate), upgraded, listed, after };
        })().then(done, (error) => done({ error: String(error && (error.message || error)) }));""")
    assert "error" not in result, result
    # Found here (Chromium 156, CDP virtual authenticator): getClientCapabilities() says conditionalCreate: true, but
    # a conditional create() never settles (no password-manager upgrade in a headless profile), so the SDK gives the
    # offer up after `wait` and the prompted registration is the path that runs. Both outcomes are checked.
    print(f"      Chromium conditionalCreate={result['conditionalCreate']}, upgradeToPasskey returned {result['upgraded']}", flush=True)
    if result["upgraded"]:
        assert result["conditionalCreate"] and result["listed"] == 1 and result["after"] == ["Upgraded"], result
    else:
        assert result["listed"] == 0 and result["after"] == ["Asked"], result
    assert len(browser.credentials()) == before + 1
    browser.screenshot(f"setup-{TAG}-7-upgrade")


@check("Authsignal sign-up: a track token from the server API, passkey.signUp in the page, and the server validates its result token")
def authsignal_sign_up(browser):
    # A fresh device, so the usernameless sign-in below can only pick this user's passkey.
    browser.cdp("WebAuthn.removeVirtualAuthenticator", {"authenticatorId": browser.authenticator})
    browser.authenticator = browser.cdp("WebAuthn.addVirtualAuthenticator", {"options": AUTHENTICATOR})["authenticatorId"]
    browser.open(URL)
    browser.wait(lambda b: b.driver.execute_script("return document.body.dataset.ready === 'true'"), "the demo page")
    tracked = authsignal("/users/as-user-1/actions/createPasskey", {"scope": "add:authenticators"})
    assert tracked["state"] in ("CHALLENGE_REQUIRED", "ALLOW") and tracked["token"], tracked
    refusals = in_page(browser, """
        const authsignal = new Authsignal({ tenantId: "default" });
        return [await authsignal.passkey.signUp({}), await authsignal.passkey.signUp({ token: "not-a-token" })];""")
    assert refusals[0] == {"error": "token_not_set", "errorCode": "token_not_set", "errorDescription": refusals[0]["errorDescription"]}, refusals
    assert refusals[1]["errorCode"] == "unauthorized" and refusals[1]["error"] == "unauthorized" and refusals[1]["errorDescription"], refusals
    assert browser.credentials() == [], "a refused token runs no ceremony"
    result = in_page(browser, """
        const authsignal = new Authsignal({ tenantId: "default" });
        return authsignal.passkey.signUp({ token: args[0], username: "jane@example.org", displayName: "Jane" });""", tracked["token"])
    data = result.get("data") or {}
    assert "error" not in result and data.get("token") and data.get("registrationResponse", {}).get("id"), result
    assert data["userAuthenticator"]["verificationMethod"] == "PASSKEY", data["userAuthenticator"]
    assert len(browser.credentials()) == 1 and browser.credentials()[0]["isResidentCredential"]
    validated = authsignal("/validate", {"token": data["token"], "action": "createPasskey"})
    assert validated["isValid"] is True and validated["userId"] == "as-user-1" and validated["state"] == "CHALLENGE_SUCCEEDED", validated
    browser.screenshot(f"setup-{TAG}-8-authsignal")


@check("Authsignal sign-in with an action (usernameless) and a step-up with a track token, each validated by the server")
def authsignal_sign_in(browser):
    result = in_page(browser, """
        const authsignal = new Authsignal({ tenantId: "default" });
        return authsignal.passkey.signIn({ action: "signInWithPasskey" });""")
    data = result.get("data") or {}
    assert data.get("isVerified") is True and data.get("userId") == "as-user-1", result
    assert data.get("username") == "jane@example.org" and data.get("displayName") == "Jane" and data.get("userAuthenticatorId"), data
    validated = authsignal("/validate", {"token": data["token"], "action": "signInWithPasskey"})
    assert validated["isValid"] is True and validated["userId"] == "as-user-1" and validated["action"] == "signInWithPasskey", validated
    tracked = authsignal("/users/as-user-1/actions/withdrawFunds", {})
    step_up = in_page(browser, """
        const authsignal = new Authsignal({ tenantId: "default" });
        return authsignal.passkey.signIn({ token: args[0] });""", tracked["token"])
    assert (step_up.get("data") or {}).get("isVerified") is True, step_up
    validated = authsignal("/validate", {"token": step_up["data"]["token"], "action": "withdrawFunds"})
    assert validated["isValid"] is True and validated["userId"] == "as-user-1", validated


@check("no Content Security Policy violation and no uncaught error in the console along the way")
def console_clean(browser):
    bad = [line for line in browser.console() if "Content Security Policy" in line or "Refused to" in line or "Uncaught" in line]
    assert not bad, bad


if __name__ == "__main__":
    main()
