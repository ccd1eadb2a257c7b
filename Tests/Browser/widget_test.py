"""The web widget <botshield-verify> (/sdk.js) on a partner page of ANOTHER origin, in headless Chromium.

Sesame serves on http://localhost:PORT; the partner's page is served here, by a tiny static server on
http://127.0.0.1:OTHER, a different site. A person signs up on the demo page (a passkey on the virtual authenticator)
and the partner's ref is linked to them with the CLI; the partner gets a test site key for its page origin and registers
that origin for return_url. Then: the inline-passkey frame confirms a linked request in place; without the beta the QR
code shows, and the request completed on the hand-off page (the QR's own address) fires botshield:success; a frame
result other than verified falls back to the QR; a phone opens the hand-off page; refused site keys and origins fire
botshield:failure; a hand-off with return_url lands on the partner's page. The partner's server checks every outcome
with its API key.

Environment: SESAME_URL (http://localhost:PORT/), SESAME_SCREENSHOTS, SESAME_CLI, SESAME_DB, SESAME_PARTNER,
SESAME_PARTNER_KEY (a test key of that partner), SESAME_MASTER_KEY_FILE for PostgreSQL.
"""
import functools
import http.server
import json
import os
import subprocess
import tempfile
import threading
import time

import zxingcpp
from PIL import Image
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By

from browser import check, demo_sign_up, main, partner_call, token_claims

URL = os.environ["SESAME_URL"]
KEY = os.environ["SESAME_PARTNER_KEY"]
PARTNER = os.environ["SESAME_PARTNER"]
EMAIL = f"ada.{int(time.time() * 1000)}@example.org"
state = {}

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Ticketz checkout</title>
<link rel="stylesheet" href="/partner.css">
<script src="SESAME/sdk.js" defer></script><script src="/partner.js" defer></script></head>
<body><header>Ticketz</header><main><h1>Checkout</h1><p>Two tickets, row 7.</p><div id="slot"></div>
<p id="result">waiting</p></main></body></html>"""
SCRIPT = """const result = document.getElementById("result");
const widget = document.createElement("botshield-verify");
for (const [name, value] of new URLSearchParams(location.search)) widget.setAttribute(name, value);
widget.addEventListener("botshield:success", (event) => {
  result.dataset.requestId = event.detail.request_id;
  result.textContent = "success";
});
widget.addEventListener("botshield:failure", (event) => { result.textContent = "failure " + event.detail.reason; });
document.getElementById("slot").append(widget);"""
STYLE = """body { margin: 0; font-family: sans-serif; background: #eef4fb; color: #123; }
header { padding: 1rem; background: #1b4f8a; color: #fff; font-weight: 700; font-size: 1.4rem; }
main { margin: 2rem; padding: 1.5rem; background: #fff; border: 3px solid #f0a020; border-radius: 10px; }
#result { color: #7a1040; font-weight: 700; }"""
DONE = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Order placed</title>
<link rel="stylesheet" href="/partner.css"></head>
<body><header>Ticketz</header><main><h1 id="done">Thank you: your order is placed.</h1></main></body></html>"""


def partner_site():
    """Serves the partner's page on 127.0.0.1 (port chosen by the system); returns its origin."""
    folder = tempfile.mkdtemp(prefix="sesame-partner-")
    files = {"index.html": PAGE.replace("SESAME/", URL), "partner.js": SCRIPT, "partner.css": STYLE, "done.html": DONE}
    for name, text in files.items():
        with open(os.path.join(folder, name), "w") as file:
            file.write(text)

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *arguments):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=folder))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}"


def cli(*arguments):
    done = subprocess.run([os.environ["SESAME_CLI"], "partner", *arguments, "--db", os.environ["SESAME_DB"]],
                          check=True, capture_output=True, timeout=30, text=True)
    return json.loads(done.stdout.splitlines()[-1])


def api(path, body=None, bearer=KEY):
    """A call of the partner's server; the `data.data` of the answer."""
    return partner_call(URL, path, body, bearer)


def status(request_id):
    return api(f"/operations/verification/status?request_id={request_id}")


def open_partner(browser, **attributes):
    """The partner's page with <botshield-verify> carrying `attributes`, then a real click on the widget's button."""
    query = "&".join(f"{name.replace('_', '-')}={value}" for name, value in attributes.items())
    browser.open(f"{state['site']}/index.html?{query}")
    browser.wait(lambda b: b.driver.execute_script("return !!customElements.get('botshield-verify')"), "the widget script")
    widget = browser.element("botshield-verify")
    # The shadow root is closed: the page (and this test) can only click the element, as a person does.
    ActionChains(browser.driver).move_to_element(widget).click().perform()
    return widget


def result(browser):
    return browser.text("#result")


def phone_tab(browser):
    """A new tab standing in for the phone that scans the QR code: the virtual authenticator is per tab, so this one gets
    its own, holding a copy of the person's passkey (as a synced passkey would be)."""
    passkey = browser.credentials()[0]
    browser.driver.switch_to.new_window("tab")
    browser.cdp("WebAuthn.enable", {"enableUI": False})
    authenticator = browser.cdp("WebAuthn.addVirtualAuthenticator", {"options": {
        "protocol": "ctap2", "transport": "internal", "hasResidentKey": True, "hasUserVerification": True,
        "isUserVerified": True, "automaticPresenceSimulation": True,
    }})["authenticatorId"]
    browser.cdp("WebAuthn.addCredential", {"authenticatorId": authenticator, "credential": passkey})
    return {"authenticator": authenticator, "signCount": passkey["signCount"]}


def sync_back(browser, sign_count):
    """Gives this tab's copy of the passkey the counter the phone's copy reached (synced passkeys share it), so the
    server's sign-count check holds for the next use here."""
    passkey = browser.credentials()[0]
    browser.cdp("WebAuthn.removeCredential", {"authenticatorId": browser.authenticator, "credentialId": passkey["credentialId"]})
    browser.cdp("WebAuthn.addCredential", {"authenticatorId": browser.authenticator, "credential": {**passkey, "signCount": sign_count}})


def decoded_qr(browser, name):
    with Image.open(browser.screenshot(name)) as image:
        return [found.text for found in zxingcpp.read_barcodes(image)]


@check("setup: a person with a passkey, the partner's ref linked to them, a site key and a return origin for the partner's page")
def setup(browser):
    state["site"] = partner_site()
    cli("link", "--partner", PARTNER, "--env", "test", "--ref", "acct_ada", "--user", demo_sign_up(browser, URL, EMAIL))
    state["key"] = cli("add-site-key", "--partner", PARTNER, "--env", "test", "--origin", state["site"])["siteKey"]
    assert state["key"].startswith("pk_test_"), state["key"]
    cli("add-return-origin", "--partner", PARTNER, state["site"])
    # A key for some other site: this page's origin is not one of its origins.
    state["elsewhere"] = cli("add-site-key", "--partner", PARTNER, "--env", "test", "--origin", "https://elsewhere.example")["siteKey"]


@check("betas=inline-passkey: the frame on Sesame's origin runs the passkey in place; the page gets botshield:success, the server completed")
def inline(browser):
    before = browser.credentials()[0]["signCount"]
    open_partner(browser, site_key=state["key"], scope="checkout", platform_user_ref="acct_ada", betas="inline-passkey")
    browser.wait(lambda b: result(b) == "success", "botshield:success from the inline frame", timeout=40)
    request_id = browser.element("#result").get_attribute("data-request-id")
    browser.screenshot("widget-1-inline-success")
    answer = status(request_id)
    assert answer["status"] == "completed" and answer["scope"] == "checkout", answer
    token = token_claims(answer["verification_token"])
    assert token["linked"] is True and token["partner_user_ref"] == "acct_ada" and token["env"] == "test", token
    # The passkey really ran (the authenticator's counter moved), and no QR code was needed.
    assert browser.credentials()[0]["signCount"] > before


@check("no beta: the QR code (the hand-off page's address) shows; completed on that page in another tab, the widget fires success")
def qr(browser):
    widget = open_partner(browser, site_key=state["key"], scope="transfer", platform_user_ref="acct_ada")
    browser.wait(lambda b: widget.get_attribute("data-state") == "open", "the QR code")
    time.sleep(0.5)  # the image loads
    found = decoded_qr(browser, "widget-2-qr")
    assert len(found) == 1 and found[0].startswith(f"{URL}verify?request_id=req_"), found
    request_id = found[0].split("request_id=")[1]
    assert status(request_id)["status"] == "pending"
    partner_tab = browser.driver.current_window_handle
    phone = phone_tab(browser)
    try:
        browser.open(found[0])
        browser.wait(lambda b: b.element("#state").get_attribute("data-state") == "pending", "the hand-off page")
        browser.element("#confirm").click()
        browser.wait(lambda b: b.element("#state").get_attribute("data-state") == "verified", "the hand-off confirmation")
        used = browser.cdp("WebAuthn.getCredentials", {"authenticatorId": phone["authenticator"]})["credentials"][0]["signCount"]
    finally:
        browser.driver.close()
        browser.driver.switch_to.window(partner_tab)
    sync_back(browser, used)
    browser.wait(lambda b: result(b) == "success", "botshield:success from polling widget/status", timeout=20)
    assert browser.element("#result").get_attribute("data-request-id") == request_id
    assert status(request_id)["status"] == "completed"
    assert used > phone["signCount"], "the phone's passkey ran"


@check("betas=inline-passkey for a ref nobody is linked to: the frame's fallback shows the QR code instead")
def inline_fallback(browser):
    widget = open_partner(browser, site_key=state["key"], scope="checkout", platform_user_ref="acct_nobody", betas="inline-passkey")
    browser.wait(lambda b: widget.get_attribute("data-state") == "open" and decoded_qr(b, "widget-3-fallback-qr"), "the QR fallback")
    found = decoded_qr(browser, "widget-3-fallback-qr")
    assert len(found) == 1 and "/verify?request_id=req_" in found[0], found
    assert result(browser) == "waiting"
    assert status(found[0].split("request_id=")[1])["status"] == "pending"


@check("a phone (mobile user agent) opens the hand-off page instead, in a new tab")
def phone(browser):
    desktop = browser.driver.execute_script("return navigator.userAgent")
    browser.cdp("Emulation.setUserAgentOverride", {"userAgent": "Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) Mobile/15E148"})
    try:
        handles = set(browser.driver.window_handles)
        open_partner(browser, site_key=state["key"], scope="checkout", betas="inline-passkey")
        browser.wait(lambda b: len(b.driver.window_handles) == len(handles) + 1, "the hand-off page in a new tab")
        partner_tab = browser.driver.current_window_handle
        browser.driver.switch_to.window((set(browser.driver.window_handles) - handles).pop())
        browser.wait(lambda b: "/verify?request_id=req_" in b.driver.current_url, "the hand-off page's address")
        assert browser.driver.current_url.startswith(f"{URL}verify?request_id=req_"), browser.driver.current_url
        browser.wait(lambda b: b.element("#state").get_attribute("data-state") == "pending", "the hand-off page on the phone")
        browser.screenshot("widget-6-phone-handoff")
        browser.driver.close()
        browser.driver.switch_to.window(partner_tab)
    finally:
        browser.cdp("Emulation.setUserAgentOverride", {"userAgent": desktop})


@check("refusals reach the page as botshield:failure: another site's key (origin_not_allowed), an unknown key (invalid_site_key)")
def refusals(browser):
    open_partner(browser, site_key=state["elsewhere"], scope="checkout")
    browser.wait(lambda b: result(b) == "failure origin_not_allowed", "origin_not_allowed")
    open_partner(browser, site_key="pk_test_unknown", scope="checkout")
    browser.wait(lambda b: result(b) == "failure invalid_site_key", "invalid_site_key")
    browser.screenshot("widget-4-failure")


@check("a hand-off with return_url on the registered origin lands on the partner's page, nothing appended")
def return_url(browser):
    grant = api("/operations/sdk/create-session", {})["anchor_grant_token"]
    target = f"{state['site']}/done.html"
    created = api("/operations/sdk/create-verification-link", {"scope": "checkout", "partner_user_ref": "acct_ada", "return_url": target},
                  bearer=grant)
    browser.open(created["web_url"])
    browser.wait(lambda b: b.element("#state").get_attribute("data-state") == "pending", "the hand-off page")
    browser.element("#confirm").click()
    browser.wait(lambda b: b.driver.current_url == target, "the partner's return page")
    assert browser.text("#done").startswith("Thank you"), browser.text("body")
    browser.screenshot("widget-5-returned")
    assert status(created["request_id"])["status"] == "completed"


@check("no Content Security Policy violation and no uncaught error in the partner page's console")
def console_clean(browser):
    bad = [line for line in browser.console() if "Content Security Policy" in line or "Refused to" in line or "Uncaught" in line]
    assert not bad, bad


if __name__ == "__main__":
    main()
