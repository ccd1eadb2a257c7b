"""The browser SDK's own pieces in headless Chromium: its fallback WebAuthn JSON helpers give what Chromium's
`parseCreationOptionsFromJSON`, `parseRequestOptionsFromJSON` and `toJSON` give, on real credentials of the virtual
authenticator. Environment: SESAME_URL (a page of the server, http://localhost:PORT/), SESAME_SCREENSHOTS.
"""
import os

from browser import check, main

URL = os.environ["SESAME_URL"]

# Runs in the page: imports the SDK, then compares native and fallback results (as hex and JSON).
COMPARE = """
const done = arguments[arguments.length - 1];
(async () => {
  const sdk = await import("/sdk/sesame.js");
  const hex = (buffer) => [...new Uint8Array(buffer)].map((byte) => byte.toString(16).padStart(2, "0")).join("");
  const creation = {
    rp: { id: "localhost", name: "SDK test" }, user: { id: "AQIDBA", name: "ada", displayName: "Ada" },
    challenge: "3q2-7_8AAQIDBAUGBwgJCgsMDQ4PEA", pubKeyCredParams: [{ type: "public-key", alg: -7 }],
    excludeCredentials: [{ type: "public-key", id: "_-8AAQ", transports: ["internal"] }],
    authenticatorSelection: { residentKey: "required", userVerification: "required" }, attestation: "none", timeout: 60000,
  };
  const native = PublicKeyCredential.parseCreationOptionsFromJSON(creation);
  const fallback = sdk.fallbackParseCreationOptions(creation);
  const result = {
    native: typeof PublicKeyCredential.parseCreationOptionsFromJSON === "function" && typeof PublicKeyCredential.prototype.toJSON === "function",
    creation: [[hex(native.challenge), hex(native.user.id), hex(native.excludeCredentials[0].id), native.rp.id, native.user.name],
               [hex(fallback.challenge), hex(fallback.user.id), hex(fallback.excludeCredentials[0].id), fallback.rp.id, fallback.user.name]],
    roundTrip: sdk.base64urlEncode(sdk.base64urlDecode("3q2-7_8AAQ==")),
  };
  const created = await navigator.credentials.create({ publicKey: fallback });
  result.registration = [created.toJSON(), sdk.fallbackCredentialToJSON(created)];
  const request = { challenge: "AAECAwQFBgcICQoLDA0ODw", rpId: "localhost", allowCredentials: [], userVerification: "required" };
  const nativeRequest = PublicKeyCredential.parseRequestOptionsFromJSON(request);
  const fallbackRequest = sdk.fallbackParseRequestOptions(request);
  result.request = [[hex(nativeRequest.challenge), nativeRequest.rpId], [hex(fallbackRequest.challenge), fallbackRequest.rpId]];
  const asserted = await navigator.credentials.get({ publicKey: fallbackRequest });
  result.authentication = [asserted.toJSON(), sdk.fallbackCredentialToJSON(asserted)];
  return result;
})().then(done, (error) => done({ error: String(error) }));
"""


def compare(browser):
    browser.driver.set_script_timeout(30)
    result = browser.driver.execute_async_script(COMPARE)
    assert "error" not in result, result
    return result


@check("Chromium has the native JSON methods, and the fallback parses options exactly as they do")
def parse(browser):
    browser.open(URL)
    result = compare(browser)
    browser.result = result
    assert result["native"], "this Chromium lacks parseCreationOptionsFromJSON/toJSON: nothing to compare with"
    assert result["creation"][0] == result["creation"][1], result["creation"]
    assert result["request"][0] == result["request"][1], result["request"]
    assert result["roundTrip"] == "3q2-7_8AAQ", result["roundTrip"]


@check("the fallback's RegistrationResponseJSON matches toJSON() on a real credential")
def registration(browser):
    native, fallback = browser.result["registration"]
    for key in ("id", "rawId", "type"):
        assert native[key] == fallback[key], (key, native[key], fallback[key])
    for key in ("clientDataJSON", "attestationObject", "transports"):
        assert native["response"][key] == fallback["response"][key], key


@check("the fallback's AuthenticationResponseJSON matches toJSON() on a real assertion, user handle included")
def authentication(browser):
    native, fallback = browser.result["authentication"]
    assert native["id"] == fallback["id"] == browser.result["registration"][0]["id"]
    for key in ("clientDataJSON", "authenticatorData", "signature", "userHandle"):
        assert native["response"][key] == fallback["response"][key], key
    assert fallback["response"]["userHandle"] == "AQIDBA"
    browser.screenshot("sdk-helpers")


if __name__ == "__main__":
    main()
