"""Client-API requests shaped exactly as the iOS, Android and web Authsignal SDKs send them (spec §1.5, §3), with a
software authenticator (the Appwrite suite's) behind each app.
"""
import base64
import os
import sys
import urllib.parse
import uuid

import requests

import harness

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "AppwriteCompat"))
from authenticator import SoftwareAuthenticator, b64url, unb64url  # noqa: E402

RP_ID = "shop.example"
WEB_ORIGIN = "https://shop.example"
FINGERPRINT = bytes.fromhex(os.environ["SESAME_ANDROID_FINGERPRINT"].replace(":", ""))
ANDROID_ORIGIN = "android:apk-key-hash:" + b64url(FINGERPRINT)


class App:
    """One app install: its platform's request shapes, its origin, its authenticator and its cached token."""

    def __init__(self, platform, tenant=harness.TENANT):
        self.platform = platform
        self.tenant = tenant
        self.authenticator = SoftwareAuthenticator()
        self.session = requests.Session()
        self.device_id = str(uuid.uuid4())
        self.token = None

    @property
    def origin(self):
        # An iOS app's origin is https://<rpId>, as is the web page's; Android's is its signing key's hash.
        return ANDROID_ORIGIN if self.platform == "android" else WEB_ORIGIN

    def tenant_basic(self):
        if self.platform == "ios":  # base64url of "<tenantID>:", padding stripped
            return "Basic " + base64.urlsafe_b64encode(f"{self.tenant}:".encode()).rstrip(b"=").decode()
        if self.platform == "android":  # standard base64 (NO_WRAP) of "<tenantID>:"
            return "Basic " + base64.b64encode(f"{self.tenant}:".encode()).decode()
        return "Basic " + base64.b64encode(urllib.parse.quote(self.tenant, safe="").encode()).decode()  # btoa(encodeURIComponent)

    def headers(self, authorization):
        headers = {"Content-Type": "application/json", "Authorization": authorization}
        if self.platform == "ios":
            headers.update({"X-Authsignal-SDK": "authsignal-ios", "X-Authsignal-Version": "2.13.0", "User-Agent": "App/1 CFNetwork"})
        elif self.platform == "android":
            headers.update({"X-Authsignal-SDK": "authsignal-android", "X-Authsignal-Version": "3.4.0"})
        else:
            headers.update({"Origin": WEB_ORIGIN})
        return headers

    def post(self, path, body, authorization):
        return self.session.post(harness.API_URL + "/client" + path, json=body, headers=self.headers(authorization))

    def get(self, path, authorization, params=None):
        headers = self.headers(authorization)
        headers.pop("Content-Type")
        return self.session.get(harness.API_URL + "/client" + path, params=params, headers=headers)

    def shape(self, credential):
        """The platform's encoding of an authenticator response."""
        credential = dict(credential)
        response = dict(credential["response"])
        if self.platform == "ios":
            # iOS: clientDataJSON in padded standard base64, a hard-coded attachment, the user handle as its string.
            response["clientDataJSON"] = base64.b64encode(unb64url(response["clientDataJSON"])).decode()
            credential["authenticatorAttachment"] = "cross-platform"
        elif self.platform == "android":
            credential.pop("authenticatorAttachment", None)
        credential["response"] = response
        return credential

    # --- The SDK's passkey methods, as their requests go ---

    def sign_up(self, token=None, username=None, display_name=None, origin=None):
        """signUp: C1 then C2 with the token; returns (C2 response, credential id)."""
        token = token or self.token
        body = {"username": username, "displayName": display_name}
        options = harness.ok(self.post("/user-authenticators/passkey/registration-options",
                                       {k: v for k, v in body.items() if v is not None}, "Bearer " + token))
        credential = self.shape(self.authenticator.create(options["options"], origin or self.origin))
        add = {"challengeId": options["challengeId"], "registrationCredential": credential}
        if self.platform == "web":
            add["conditionalCreate"] = False
        else:
            add["deviceId"] = self.device_id
        response = self.post("/user-authenticators/passkey", add, "Bearer " + token)
        if response.status_code == 200 and response.json().get("accessToken"):
            self.token = response.json()["accessToken"]
        return response, credential["id"]

    def sign_in_options(self, action=None, token=None):
        """signIn up to the assertion: C3 (named action) and C4 with tenant Basic, or C4 with the token."""
        if action:
            challenge = harness.ok(self.post("/challenge", {"action": action}, self.tenant_basic()))
            return harness.ok(self.post("/user-authenticators/passkey/authentication-options",
                                        {"challengeId": challenge["challengeId"]}, self.tenant_basic()))
        return harness.ok(self.post("/user-authenticators/passkey/authentication-options", {}, "Bearer " + token))

    def verify(self, options, credential, token=None):
        """C5 with the assertion (tenant Basic, or Bearer `token`)."""
        body = {"challengeId": options["challengeId"], "authenticationCredential": credential}
        if self.platform != "web":
            body["deviceId"] = self.device_id
        return self.post("/verify/passkey", body, "Bearer " + token if token else self.tenant_basic())

    def sign_in(self, action=None, token=None, origin=None):
        """signIn(action:) or signIn(token:); returns the C5 response."""
        options = self.sign_in_options(action=action, token=token)
        credential = self.shape(self.authenticator.get(options["options"], origin or self.origin))
        response = self.verify(options, credential, token=token)
        if response.status_code == 200 and response.json().get("accessToken"):
            self.token = response.json()["accessToken"]
        return response
