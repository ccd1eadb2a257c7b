"""A tiny check runner for the Authsignal compatibility suite: no pytest, only the pinned SDK (and `requests`, its
dependency, for requests shaped like the iOS, Android and web SDKs').

Environment: AUTHSIGNAL_API_URL (http://127.0.0.1:PORT/authsignal/v1), AUTHSIGNAL_API_SECRET (a tenant secret),
SESAME_TENANT (the tenant ID), SESAME_REVOKED_SECRET, SESAME_EXPIRED_TOKEN, SESAME_ANDROID_FINGERPRINT. Every check
runs against that live server; a failed check prints its traceback and the process exits 1.
"""
import json
import os
import traceback

import requests

from authsignal.client import AuthsignalClient, ApiException

API_URL = os.environ["AUTHSIGNAL_API_URL"]
SECRET = os.environ["AUTHSIGNAL_API_SECRET"]
TENANT = os.environ["SESAME_TENANT"]

CHECKS = []
RESPONSES = []  # (method, url, status, content type) of every answer from the face, whoever asked

_send = requests.Session.send


SEEN = set()  # tokens, challenges, challenge and credential IDs, secrets: none may reach the server's log


def _remember(value):
    """Collects the secret-ish strings of a request or answer body."""
    if isinstance(value, dict):
        for key, member in value.items():
            if key in ("token", "accessToken", "challenge", "challengeId", "id", "rawId", "credentialId", "signature",
                       "clientDataJSON", "attestationObject", "authenticatorData", "idempotencyKey") and isinstance(member, str):
                SEEN.add(member)
            _remember(member)
    elif isinstance(value, list):
        for member in value:
            _remember(member)


def _recording_send(self, request, **kwargs):
    response = _send(self, request, **kwargs)
    if "/authsignal/v1" in request.url:
        RESPONSES.append((request.method, request.url, response.status_code, response.headers.get("Content-Type")))
        for body in (request.body, response.content):
            try:
                _remember(json.loads(body or b"null"))
            except (ValueError, TypeError):
                pass
    return response


# Every request (the official SDK's session is a requests.Session) passes here, so the suite sees every Content-Type.
requests.Session.send = _recording_send


def check(function):
    """Registers a check; checks run in definition order."""
    CHECKS.append(function)
    return function


def sdk(secret=SECRET):
    """The official server SDK, pointed at Sesame by its base URL only."""
    return AuthsignalClient(secret, api_url=API_URL)


def expect_api_error(status, code, function, *args, **kwargs):
    """Calls an SDK method and requires an ApiException with this status and errorCode and a description."""
    try:
        result = function(*args, **kwargs)
    except ApiException as error:
        assert error.status_code == status and error.error_code == code, \
            f"expected {status}/{code}, got {error.status_code}/{error.error_code}: {error.error_description}"
        assert error.error_description, "an error needs a description"
        return error
    raise AssertionError(f"expected {status}/{code}, but the call succeeded: {result!r}")


def expect_error(response, status, code):
    """Requires a §1.4 error body: `error` and `errorCode` both `code`, a non-empty `errorDescription`."""
    assert response.status_code == status, f"expected HTTP {status}, got {response.status_code}: {response.text}"
    assert response.headers.get("Content-Type") == "application/json", response.headers.get("Content-Type")
    body = response.json()
    assert body.get("error") == code and body.get("errorCode") == code, f"expected {code}: {body}"
    assert isinstance(body.get("errorDescription"), str) and body["errorDescription"], f"empty description: {body}"
    return body


def ok(response):
    """Requires exactly HTTP 200 with `Content-Type: application/json` and no top-level `error`; returns the body."""
    assert response.status_code == 200, f"expected 200, got {response.status_code}: {response.text}"
    assert response.headers.get("Content-Type") == "application/json", response.headers.get("Content-Type")
    body = response.json()
    assert not (isinstance(body, dict) and "error" in body), f"a success with an error member: {body}"
    return body


def expect_equal(actual, expected, what=""):
    assert actual == expected, f"{what}: expected {expected!r}, got {actual!r}"


def run():
    """Runs every registered check and returns the process exit status."""
    failed = 0
    for function in CHECKS:
        try:
            function()
            print(f"ok   {function.__name__}")
        except Exception:  # noqa: BLE001 - every failure is reported, then counted
            failed += 1
            print(f"FAIL {function.__name__}")
            traceback.print_exc()
    if os.environ.get("SESAME_SEEN_FILE"):
        with open(os.environ["SESAME_SEEN_FILE"], "w") as seen:
            json.dump(sorted(v for v in SEEN if len(v) >= 12), seen)
    print(f"{len(CHECKS) - failed} passed, {failed} failed")
    return 1 if failed else 0
