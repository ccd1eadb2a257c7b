"""The demo page at / in headless Chromium with a virtual authenticator: the whole first-ten-minutes loop.

Environment: SESAME_URL (the page, http://localhost:PORT/), SESAME_SCREENSHOTS (a folder), SESAME_BACKEND (a tag
for the screenshots' names). Exits 0 when every check passed. The checks run in order on one browser: each one
starts where the previous one left the page.
"""
import os
import time

from browser import check, main

URL = os.environ["SESAME_URL"]
TAG = os.environ.get("SESAME_BACKEND", "run")
EMAIL = f"ada.{int(time.time() * 1000)}@example.org"


def ready(browser):
    """Waits until the page has loaded the account state."""
    browser.wait(lambda b: b.driver.execute_script("return document.body.dataset.ready === 'true'"), "the page to be ready")


def status(browser):
    return browser.text("#status")


def signed_in(browser):
    browser.wait(lambda b: status(b) == f"Signed in as {EMAIL}", f"#status to say signed in as {EMAIL}")


def signed_out(browser):
    browser.wait(lambda b: status(b) == "Signed out", "#status to say signed out")


def idle(browser):
    """Waits until no action runs (the page turns its buttons off while one does)."""
    browser.wait(lambda b: all(button.is_enabled() for button in b.elements("button")), "the action to finish")


def passkeys(browser):
    return browser.elements("#passkeys li")


@check("on 127.0.0.1 the page says to open localhost instead (another site, not the relying party)")
def wrong_host(browser):
    browser.open(URL.replace("://localhost:", "://127.0.0.1:"))
    ready(browser)
    browser.wait(lambda b: b.element("#message").get_attribute("data-reason") == "not_localhost", "the localhost hint")
    assert f"open {URL}" in browser.text("#message"), browser.text("#message")


@check("the page loads signed out, with every control, and a screenshot that is not blank")
def loads(browser):
    browser.open(URL)
    ready(browser)
    signed_out(browser)
    for control in ("#email", "#password", "#signup", "#signin"):
        assert browser.element(control).is_displayed(), f"{control} is not shown to a guest"
    assert browser.element("#email").get_attribute("autocomplete") == "username webauthn"
    assert not browser.element("#signout").is_displayed() and passkeys(browser) == []
    browser.screenshot(f"demo-{TAG}-1-signed-out")


@check("sign up: account, session, then a passkey on the authenticator (resident, for the localhost relying party)")
def sign_up(browser):
    browser.element("#email").send_keys(EMAIL)
    browser.element("#password").send_keys("correct horse battery")
    browser.element("#signup").click()
    signed_in(browser)
    idle(browser)
    browser.wait(lambda b: len(passkeys(b)) == 1, "one passkey in #passkeys")
    credentials = browser.credentials()
    assert len(credentials) == 1, credentials
    assert credentials[0]["rpId"] == "localhost" and credentials[0]["isResidentCredential"], credentials[0]
    assert "Not used" in passkeys(browser)[0].text, passkeys(browser)[0].text
    # The browser kept both session cookies (a SameSite=None cookie without Secure would have been dropped).
    cookies = {cookie["name"]: cookie for cookie in browser.driver.get_cookies()}
    main, legacy = cookies.get("a_session_default"), cookies.get("a_session_default_legacy")
    assert main and legacy, f"session cookies kept: {sorted(cookies)}"
    assert main["httpOnly"] and legacy["httpOnly"] and not main["secure"] and main.get("sameSite") == "Lax", main
    browser.screenshot(f"demo-{TAG}-2-signed-up")


@check("reload keeps the session")
def reload_after_sign_up(browser):
    browser.driver.refresh()
    ready(browser)
    signed_in(browser)
    assert len(passkeys(browser)) == 1


@check("sign out")
def sign_out(browser):
    browser.element("#signout").click()
    signed_out(browser)
    idle(browser)
    assert passkeys(browser) == []
    browser.driver.refresh()
    ready(browser)
    signed_out(browser)


@check("sign in with the passkey, usernameless (no email typed): the session comes back and the passkey shows its use")
def sign_in(browser):
    before = browser.credentials()[0]["signCount"]
    browser.element("#signin").click()
    signed_in(browser)
    idle(browser)
    browser.wait(lambda b: len(passkeys(b)) == 1 and "Last used" in passkeys(b)[0].text, "the passkey to show its last use")
    assert browser.credentials()[0]["signCount"] > before
    browser.screenshot(f"demo-{TAG}-3-signed-in")


@check("reload keeps the session")
def reload_after_sign_in(browser):
    browser.driver.refresh()
    ready(browser)
    signed_in(browser)


@check("autofill: signed out, focusing #email offers the passkey (conditional mediation) and signs in")
def autofill(browser):
    browser.element("#signout").click()
    signed_out(browser)
    idle(browser)
    assert browser.driver.execute_script("return PublicKeyCredential.isConditionalMediationAvailable()")
    browser.element("#email").click()
    signed_in(browser)
    idle(browser)
    assert "Signed in with your passkey" in browser.text("#message"), browser.text("#message")


@check("rename the passkey; the new name stays after a reload")
def rename(browser):
    item = passkeys(browser)[0]
    item.find_element("css selector", "input.new-name").send_keys("Work laptop")
    item.find_element("css selector", "button.rename").click()
    browser.wait(lambda b: len(passkeys(b)) == 1 and b.text("#passkeys li .name") == "Work laptop", "the new name")
    idle(browser)
    browser.driver.refresh()
    ready(browser)
    browser.wait(lambda b: b.text("#passkeys li .name") == "Work laptop", "the new name after a reload")


@check("delete the passkey: the list is empty, the account stays signed in")
def delete(browser):
    passkeys(browser)[0].find_element("css selector", "button.delete").click()
    browser.wait(lambda b: passkeys(b) == [] and "deleted" in b.text("#message"), "an empty list and a message")
    idle(browser)
    signed_in(browser)
    assert len(browser.credentials()) == 1, "the authenticator still holds its copy"


@check("a sign-in with the deleted passkey fails, the page says why, and the browser is told to forget the passkey")
def sign_in_with_deleted(browser):
    browser.element("#signout").click()
    signed_out(browser)
    idle(browser)
    browser.element("#signin").click()
    browser.wait(lambda b: b.element("#message").get_attribute("data-reason") == "unknown-credential", "the unknown-passkey message")
    idle(browser)
    assert "no longer registered" in browser.text("#message"), browser.text("#message")
    signed_out(browser)
    # signalUnknownCredential: Chromium removes the credential from the authenticator.
    has_signal = browser.driver.execute_script("return typeof PublicKeyCredential.signalUnknownCredential === 'function'")
    assert has_signal, "this Chromium lacks the Signal API"
    browser.wait(lambda b: b.credentials() == [], "the authenticator to drop the unknown credential")
    browser.screenshot(f"demo-{TAG}-4-deleted-passkey-refused")


@check("no Content Security Policy violation and no uncaught error in the console along the way")
def console_clean(browser):
    bad = [line for line in browser.console() if "Content Security Policy" in line or "Refused to" in line or "Uncaught" in line]
    assert not bad, bad


if __name__ == "__main__":
    main()
