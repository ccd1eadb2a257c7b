"""The hosted hand-off page, /verify?request_id=…, in headless Chromium with a virtual authenticator.

A person signs up on the demo page (a passkey for the localhost relying party), the partner's ref is linked to them
with the CLI, and the partner's server opens requests: a linked one confirmed on the page, an unlinked one
confirmed with the same (discoverable) passkey, one declined, and a link: true request refused since the person is linked already, an unknown ID, the request's QR code, and setup_url. The partner's server then reads
each outcome with its API key, never the page's word.

Environment: SESAME_URL (http://localhost:PORT/), SESAME_SCREENSHOTS, SESAME_CLI (the sesame binary), SESAME_DB,
SESAME_PARTNER and SESAME_PARTNER_KEY (a test key of that partner).
"""
import os
import subprocess
import time

import zxingcpp
from PIL import Image

from browser import check, demo_sign_up, main, partner_call, token_claims

URL = os.environ["SESAME_URL"]
KEY = os.environ["SESAME_PARTNER_KEY"]
EMAIL = f"grace.{int(time.time() * 1000)}@example.org"
state = {}


def api(path, body=None, bearer=KEY):
    """A call of the partner's server; the `data.data` of the answer."""
    return partner_call(URL, path, body, bearer)


def new_request(**fields):
    grant = api("/operations/sdk/create-session", {})["anchor_grant_token"]
    created = api("/operations/sdk/create-verification-link", fields, bearer=grant)
    assert created["web_url"].endswith(f"/verify?request_id={created['request_id']}"), created
    state["created"] = created
    return created["request_id"]


def status(request_id):
    return api(f"/operations/verification/status?request_id={request_id}")


def page_state(browser):
    return browser.element("#state").get_attribute("data-state")


def open_request(browser, request_id):
    browser.open(f"{URL}verify?request_id={request_id}")
    browser.wait(lambda b: b.driver.execute_script("return document.body.dataset.ready === 'true'"), "the hand-off page")


@check("a person signs up on the demo page, and the partner's ref is linked to them")
def person(browser):
    state["user"] = demo_sign_up(browser, URL, EMAIL)
    subprocess.run([os.environ["SESAME_CLI"], "partner", "link", "--db", os.environ["SESAME_DB"], "--partner", os.environ["SESAME_PARTNER"],
                    "--env", "test", "--ref", "acct_grace", "--user", state["user"]], check=True, capture_output=True, timeout=30)


@check("a linked request: the page shows the partner and the scope, the passkey confirms it, the partner's status says so")
def linked(browser):
    request_id = new_request(scope="checkout", partner_user_ref="acct_grace")
    assert status(request_id)["status"] == "pending"
    open_request(browser, request_id)
    browser.wait(lambda b: page_state(b) == "pending", "a pending request")
    assert browser.text("#partner") == "Ticketz" and browser.text("#scope") == "checkout", browser.text("#request")
    browser.screenshot("handoff-1-pending")
    browser.element("#confirm").click()
    browser.wait(lambda b: page_state(b) == "verified", "the confirmation")
    assert not browser.element("#confirm").is_displayed() and not browser.element("#decline").is_displayed()
    browser.screenshot("handoff-2-verified")
    answer = status(request_id)
    assert answer["status"] == "completed", answer
    token = token_claims(answer["verification_token"])
    assert token["verified"] is True and token["linked"] is True and token["partner_user_ref"] == "acct_grace", token
    state["finished"] = request_id


@check("qr_code_url: the SVG as Chromium draws it decodes (zxing-cpp) to the request's web_url")
def qr_code(browser):
    created = state["created"]
    assert created["qr_code_url"].endswith(f"/operations/qr/{created['request_id']}.svg"), created
    browser.open(created["qr_code_url"])
    path = browser.screenshot("handoff-qr")
    with Image.open(path) as image:
        found = [result.text for result in zxingcpp.read_barcodes(image)]
    assert found == [created["web_url"]], found


@check("opening a finished request again says it is finished, with nothing to press")
def finished(browser):
    open_request(browser, state["finished"])
    browser.wait(lambda b: page_state(b) == "finished", "the finished state")
    assert not browser.element("#confirm").is_displayed()


@check("an unlinked request is confirmed with any discoverable passkey of the project: linked false")
def unlinked(browser):
    request_id = new_request(scope="login")
    open_request(browser, request_id)
    browser.wait(lambda b: page_state(b) == "pending", "a pending request")
    browser.element("#confirm").click()
    browser.wait(lambda b: page_state(b) == "verified", "the confirmation")
    answer = status(request_id)
    assert answer["status"] == "completed" and token_claims(answer["verification_token"])["linked"] is False, answer


@check("link: true: the page says it links; the person is linked to another ref already, so the request fails (already_linked)")
def link(browser):
    request_id = new_request(scope="secure_account", partner_user_ref="acct_grace_2", link=True)
    open_request(browser, request_id)
    browser.wait(lambda b: page_state(b) == "pending", "a pending request")
    assert "links your account" in browser.text("#state"), browser.text("#state")
    browser.element("#confirm").click()
    browser.wait(lambda b: page_state(b) == "failed", "the failed state")
    assert "already linked" in browser.text("#state") and not browser.element("#confirm").is_displayed(), browser.text("#state")
    assert status(request_id)["status"] == "failed"
    # Nothing was linked: the new ref still has no person.
    fallback = api("/operations/request/passkey-options", {"request_id": new_request(scope="checkout", partner_user_ref="acct_grace_2")})
    assert fallback.get("reason") == "not_linked", fallback


@check("Decline fails the request (user_denied) and the partner's status says failed")
def decline(browser):
    request_id = new_request(scope="transfer", partner_user_ref="acct_grace")
    open_request(browser, request_id)
    browser.wait(lambda b: page_state(b) == "pending", "a pending request")
    browser.element("#decline").click()
    browser.wait(lambda b: page_state(b) == "declined", "the declined state")
    browser.screenshot("handoff-3-declined")
    answer = status(request_id)
    assert answer["status"] == "failed", answer
    assert len(browser.credentials()) == 1, "declining touches no passkey"


@check("an unknown request ID says the link is not valid")
def unknown(browser):
    open_request(browser, "req_" + "0" * 32)
    browser.wait(lambda b: page_state(b) == "unknown", "the unknown state")
    assert not browser.element("#confirm").is_displayed()


@check("setup_url (a not_linked fallback's way through) opens the setup page, where the person signs in with the passkey")
def setup(browser):
    fallback = api("/operations/request/passkey-options", {"request_id": new_request(scope="checkout", partner_user_ref="acct_nobody")})
    assert fallback.get("reason") == "not_linked" and fallback["setup_url"].endswith("/app/account/passkey"), fallback
    browser.open(fallback["setup_url"].replace(fallback["setup_url"].split("/app/")[0], URL.rstrip("/")))
    browser.wait(lambda b: b.driver.execute_script("return document.body.dataset.ready === 'true'"), "the setup page")
    assert browser.text("#status") == "Signed out", browser.text("#status")
    browser.element("#signin").click()
    # The setup page names the person by their ID, never by the email of their account.
    browser.wait(lambda b: b.text("#status").startswith("Signed in as Sesame ID •") and len(b.elements("#passkeys li")) == 1, "the sign-in")
    assert EMAIL not in browser.text("body")
    browser.screenshot("handoff-4-setup")


@check("no Content Security Policy violation and no uncaught error in the console along the way")
def console_clean(browser):
    bad = [line for line in browser.console() if "Content Security Policy" in line or "Refused to" in line or "Uncaught" in line]
    assert not bad, bad


if __name__ == "__main__":
    main()
