"""Headless Chromium under Selenium with a CDP virtual authenticator, for the page tests (run by BrowserTests.swift).

Chromium and chromedriver come from Debian (`chromium`, `chromium-driver`); Selenium from PyPI (pinned below 4.40).
The virtual authenticator is a CTAP2 platform authenticator (`internal` transport) with resident keys and user
verification, which approves every request by itself, so `navigator.credentials.create()`/`get()` run for real.
"""
import base64
import json
import os
import sys
import time
import urllib.request

from PIL import Image
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

CHROMIUM = os.environ.get("SESAME_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("SESAME_CHROMEDRIVER", "/usr/bin/chromedriver")


class Browser:
    """One headless Chromium with one virtual authenticator."""

    def __init__(self, screenshots):
        options = webdriver.ChromeOptions()
        options.binary_location = CHROMIUM
        for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--no-proxy-server",
                         "--window-size=1000,900", "--no-first-run", "--disable-extensions"):
            options.add_argument(argument)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        self.driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
        self.screenshots = screenshots
        os.makedirs(screenshots, exist_ok=True)
        self.cdp("WebAuthn.enable", {"enableUI": False})
        self.authenticator = self.cdp("WebAuthn.addVirtualAuthenticator", {"options": {
            "protocol": "ctap2", "transport": "internal", "hasResidentKey": True, "hasUserVerification": True,
            "isUserVerified": True, "automaticPresenceSimulation": True,
        }})["authenticatorId"]

    def cdp(self, command, parameters=None):
        return self.driver.execute_cdp_cmd(command, parameters or {})

    def credentials(self):
        """The credentials the virtual authenticator holds."""
        return self.cdp("WebAuthn.getCredentials", {"authenticatorId": self.authenticator})["credentials"]

    def open(self, url):
        self.driver.get(url)

    def element(self, selector):
        return self.driver.find_element(By.CSS_SELECTOR, selector)

    def elements(self, selector):
        return self.driver.find_elements(By.CSS_SELECTOR, selector)

    def wait(self, condition, what, timeout=20):
        """Waits until `condition(browser)` is truthy; fails naming `what`, the page's text and its console."""
        # The page re-renders its list after each action: an element found just before that is stale, so try again.
        wait = WebDriverWait(self.driver, timeout, poll_frequency=0.1,
                             ignored_exceptions=(NoSuchElementException, StaleElementReferenceException))
        try:
            return wait.until(lambda _: condition(self))
        except Exception as error:
            raise AssertionError(f"waiting for {what}: {type(error).__name__}; page: {self.text('body')!r}; "
                                 f"console: {self.console()}") from error

    def text(self, selector):
        found = self.elements(selector)
        return found[0].text if found else ""

    def console(self):
        try:
            return [entry["message"] for entry in self.driver.get_log("browser")]
        except Exception:
            return []

    def screenshot(self, name):
        """Saves a screenshot and checks it is not blank: enough distinct colours and enough non-background pixels."""
        path = os.path.join(self.screenshots, f"{name}.png")
        self.driver.save_screenshot(path)
        with Image.open(path) as image:
            pixels = image.convert("RGB").resize((200, 180))
            colours = pixels.getcolors(maxcolors=200 * 180)
        colours.sort(reverse=True)
        background = colours[0][0] / (200 * 180)
        assert len(colours) >= 8 and background < 0.97, f"{path} looks blank: {len(colours)} colours, background {background:.0%}"
        return path

    def quit(self):
        self.driver.quit()


checks = []


def check(name):
    """Registers a check; run_checks() runs them in order and prints one line each, then a summary."""
    def register(function):
        checks.append((name, function))
        return function
    return register


def run_checks(*arguments):
    passed = failed = 0
    for name, function in checks:
        started = time.monotonic()
        try:
            function(*arguments)
            passed += 1
            print(f"ok    {name} ({time.monotonic() - started:.1f} s)", flush=True)
        except Exception as error:  # noqa: BLE001 - every failure is reported, then the run fails
            failed += 1
            print(f"FAIL  {name}: {type(error).__name__}: {error}", flush=True)
    print(f"{passed} passed, {failed} failed", flush=True)
    return failed == 0


def main():
    """Runs the registered checks on one new browser (screenshots in SESAME_SCREENSHOTS) and exits 0 when all pass."""
    browser = Browser(os.environ["SESAME_SCREENSHOTS"])
    try:
        ok = run_checks(browser)
    finally:
        browser.quit()
    sys.exit(0 if ok else 1)


def partner_call(url, path, body=None, bearer=""):
    """A call of the partner's server to the Sesame at `url` (a POST with a JSON body, else a GET), with `bearer` (an
    API key or a grant) as its Bearer; the `data.data` of the answer."""
    request = urllib.request.Request(url.rstrip("/") + path, method="POST" if body is not None else "GET",
                                     data=json.dumps(body).encode() if body is not None else None,
                                     headers={"Authorization": f"Bearer {bearer}", "Content-Type": "application/json"})
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(request, timeout=10) as response:
        return json.load(response)["data"]["data"]


def token_claims(token):
    """The payload of a compact JWS (a verification token), read without checking its signature."""
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


def demo_sign_up(browser, url, email):
    """Signs up on the demo page at `url` (an account, a session, a passkey in the page's authenticator); returns the
    account's user ID."""
    browser.open(url)
    browser.wait(lambda b: b.text("#status") == "Signed out", "the demo page")
    browser.element("#email").send_keys(email)
    browser.element("#password").send_keys("correct horse battery")
    browser.element("#signup").click()
    browser.wait(lambda b: b.text("#status") == f"Signed in as {email}" and len(b.elements("#passkeys li")) == 1, "the sign-up")
    browser.driver.set_script_timeout(10)
    user = browser.driver.execute_async_script("""
        const done = arguments[arguments.length - 1];
        fetch("/v1/account", { headers: { "X-Appwrite-Project": "default" } }).then((r) => r.json()).then(done, (e) => done(String(e)));""")
    return user["$id"]
