"""The client API as the iOS, Android and web SDKs call it (spec §3), with the backend's side through the official
SDK: sign-up with a track token, usernameless sign-in with a named action, step-up for a known user, validate, the
passkey lookup and list, and every refusal a client can meet.
"""
import os
import uuid

import requests

import harness
from apps import App, SoftwareAuthenticator, b64url
from harness import expect_equal, expect_error, ok, sdk

PLATFORMS = ("ios", "android", "web")
ENROLLED = {}  # platform -> (user ID, app with its passkey, credential ID)


def new_user():
    return f"user-{uuid.uuid4().hex[:10]}"


def enrolled(platform):
    """A user with a passkey made by `platform`'s app, signed up once per platform."""
    if platform not in ENROLLED:
        user, app = new_user(), App(platform)
        tracked = sdk().track(user, "createPasskey", {"scope": "add:authenticators"})
        response, credential_id = app.sign_up(tracked["token"], username=f"{user}@example.org", display_name="Jane Smith")
        ok(response)
        ENROLLED[platform] = (user, app, credential_id)
    return ENROLLED[platform]


@harness.check
def sign_up_with_a_track_token_on_each_platform_then_validate_the_result_token():
    for platform in PLATFORMS:
        user, app = new_user(), App(platform)
        tracked = sdk().track(user, "createPasskey")
        expect_equal(tracked["state"], "ALLOW", "a user without authenticators")
        options = ok(app.post("/user-authenticators/passkey/registration-options", {"username": "jane@example.org"},
                              "Bearer " + tracked["token"]))
        creation = options["options"]
        # Every member iOS and Android decode without a default.
        for member in ("challenge", "rp", "user", "timeout", "pubKeyCredParams", "attestation", "excludeCredentials",
                       "authenticatorSelection"):
            assert member in creation, (member, creation)
        assert len(creation["challenge"]) == 43 and creation["rp"] == {"id": "shop.example", "name": creation["rp"]["name"]}
        assert creation["user"]["name"] == "jane@example.org" and creation["user"]["displayName"] == "jane@example.org", creation
        selection = creation["authenticatorSelection"]
        assert selection["residentKey"] == "required" and selection["requireResidentKey"] is True and selection["userVerification"]
        credential = app.shape(app.authenticator.create(creation, app.origin))
        body = {"challengeId": options["challengeId"], "registrationCredential": credential, "deviceId": app.device_id}
        added = ok(app.post("/user-authenticators/passkey", body, "Bearer " + tracked["token"]))
        assert added["isVerified"] is True and added["accessToken"] and added["userId"] == user, added
        assert added["userAuthenticatorId"] and added["credentialId"] == credential["id"], added
        validated = sdk().validate_challenge({"token": added["accessToken"], "userId": user, "action": "createPasskey"})
        assert validated["is_valid"] is True and validated["state"] == "CHALLENGE_SUCCEEDED", validated
        expect_equal((validated["verification_method"], validated["action"], validated["action_code"], validated["idempotency_key"]),
                     ("PASSKEY", "createPasskey", "createPasskey", tracked["idempotency_key"]), "validated")
        passkeys = [a for a in sdk().get_authenticators(user) if a["verification_method"] == "PASSKEY"]
        assert len(passkeys) == 1 and passkeys[0]["webauthn_credential"]["credential_id"] == credential["id"], passkeys
        # A reused registration challenge is refused.
        expect_error(app.post("/user-authenticators/passkey", body, "Bearer " + tracked["token"]), 400, "invalid_request")


@harness.check
def a_second_passkey_needs_add_authenticators_and_excludes_the_first():
    user, app, credential_id = enrolled("ios")
    plain = sdk().track(user, "addPasskey")
    expect_error(app.post("/user-authenticators/passkey/registration-options", {}, "Bearer " + plain["token"]), 403, "forbidden")
    scoped = sdk().track(user, "addPasskey", {"scope": "add:authenticators"})
    options = ok(app.post("/user-authenticators/passkey/registration-options", {}, "Bearer " + scoped["token"]))
    assert [d["id"] for d in options["options"]["excludeCredentials"]] == [credential_id], options
    # The result token of a sign-up carries add:authenticators, so the SDK's follow-up signUp() with no token works.
    other = App("ios")
    response, _ = other.sign_up(sdk().track(new_user(), "createPasskey")["token"])
    ok(response)
    other.authenticator = SoftwareAuthenticator()  # the first would refuse: it holds an excluded credential
    again, _ = other.sign_up()  # uses the cached result token
    assert ok(again)["isVerified"] is True


@harness.check
def usernameless_sign_in_with_a_named_action_in_each_tenant_basic_encoding():
    for platform in PLATFORMS:
        user, app, _ = enrolled(platform)
        action = f"signIn{platform.capitalize()}"
        challenge = ok(app.post("/challenge", {"action": action}, app.tenant_basic()))
        options = ok(app.post("/user-authenticators/passkey/authentication-options", {"challengeId": challenge["challengeId"]},
                              app.tenant_basic()))
        request = options["options"]
        assert request["allowCredentials"] == [] and request["rpId"] == "shop.example" and len(request["challenge"]) == 43, request
        credential = app.shape(app.authenticator.get(request, app.origin))
        verified = ok(app.verify(options, credential))
        assert verified["isVerified"] is True and verified["userId"] == user and verified["accessToken"], verified
        assert verified["username"] == f"{user}@example.org" and verified["userDisplayName"] == "Jane Smith", verified
        validated = sdk().validate_challenge({"token": verified["accessToken"], "action": action})
        assert validated["is_valid"] is True and validated["user_id"] == user and validated["state"] == "CHALLENGE_SUCCEEDED", validated
        mismatched = sdk().validate_challenge({"token": verified["accessToken"], "action": "withdrawFunds"})
        assert mismatched["is_valid"] is False and mismatched["error"] == "action_mismatch", mismatched
        # The challenge was used: the same answer again is refused.
        expect_error(app.verify(options, credential), 400, "invalid_request")


@harness.check
def sign_in_without_a_named_action_uses_signInWithPasskey_and_the_web_idempotency_key():
    user, app, _ = enrolled("web")
    options = ok(app.post("/user-authenticators/passkey/authentication-options", {}, app.tenant_basic()))
    verified = ok(app.verify(options, app.shape(app.authenticator.get(options["options"], app.origin))))
    validated = sdk().validate_challenge({"token": verified["accessToken"]})
    assert validated["is_valid"] and validated["action"] == "signInWithPasskey" and validated["user_id"] == user, validated
    key = uuid.uuid4().hex
    challenge = ok(app.post("/challenge", {"action": "webLogin", "idempotencyKey": key}, app.tenant_basic()))
    options = ok(app.post("/user-authenticators/passkey/authentication-options", {"challengeId": challenge["challengeId"]},
                          app.tenant_basic()))
    verified = ok(app.verify(options, app.shape(app.authenticator.get(options["options"], app.origin))))
    expect_equal(sdk().validate_challenge({"token": verified["accessToken"]})["idempotency_key"], key, "the web SDK's key")


@harness.check
def step_up_for_a_known_user_with_the_track_token():
    user, app, credential_id = enrolled("android")
    tracked = sdk().track(user, "withdrawFunds")
    expect_equal(tracked["state"], "CHALLENGE_REQUIRED", "an enrolled user")
    options = app.sign_in_options(token=tracked["token"])
    assert [d["id"] for d in options["options"]["allowCredentials"]] == [credential_id], options
    verified = ok(app.verify(options, app.shape(app.authenticator.get(options["options"], app.origin)), token=tracked["token"]))
    assert verified["isVerified"] is True and verified["userId"] == user, verified
    validated = sdk().validate_challenge({"token": verified["accessToken"], "userId": user, "action": "withdrawFunds"})
    assert validated["is_valid"] is True and validated["idempotency_key"] == tracked["idempotency_key"], validated
    # The track token itself now names a completed action too; another user's ID does not match it.
    assert sdk().validate_challenge({"token": verified["accessToken"], "userId": new_user()})["is_valid"] is False


@harness.check
def step_up_answered_by_another_users_passkey_is_invalid_credential():
    user, _, _ = enrolled("ios")
    _, other_app, _ = enrolled("android")
    tracked = sdk().track(user, "transfer")
    options = other_app.sign_in_options(token=tracked["token"])
    answer = other_app.shape(other_app.authenticator.get(options["options"], other_app.origin))
    expect_error(other_app.verify(options, answer, token=tracked["token"]), 400, "invalid_credential")
    assert sdk().validate_challenge({"token": tracked["token"]})["is_valid"] is False


@harness.check
def a_tampered_assertion_or_a_wrong_origin_is_not_verified_and_earns_no_token():
    user, app, _ = enrolled("ios")
    for mutate in ("signature", "origin"):
        tracked = sdk().track(user, "payment")
        options = app.sign_in_options(token=tracked["token"])
        answer = app.shape(app.authenticator.get(options["options"], "https://evil.example" if mutate == "origin" else app.origin))
        if mutate == "signature":
            response = dict(answer["response"])
            signature = bytearray(base64_decode(response["signature"]))
            signature[-1] ^= 0x01
            response["signature"] = b64url(bytes(signature))
            answer["response"] = response
        refused = ok(app.verify(options, answer, token=tracked["token"]))
        expect_equal(refused, {"isVerified": False}, mutate)
        action = sdk().get_action(user, "payment", tracked["idempotency_key"])
        expect_equal(action["state"], "CHALLENGE_FAILED", f"state after a {mutate} failure")
        assert sdk().validate_challenge({"token": tracked["token"]})["is_valid"] is False


def base64_decode(text):
    import base64
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@harness.check
def an_unknown_credential_is_400_unknown_credential():
    stranger = App("ios")
    # A passkey for the relying party that Sesame never registered.
    stranger.authenticator.create({"rp": {"id": "shop.example"}, "challenge": b64url(os.urandom(32)), "user": {"id": b64url(os.urandom(16))}},
                                  stranger.origin)
    options = stranger.sign_in_options(action="signInWithPasskey")
    answer = stranger.shape(stranger.authenticator.get(options["options"], stranger.origin))
    expect_error(stranger.verify(options, answer), 400, "unknown_credential")


@harness.check
def expired_forged_and_missing_tokens_and_unknown_tenants_are_refused():
    app = App("ios")
    expired = os.environ["SESAME_EXPIRED_TOKEN"]
    expect_error(app.post("/user-authenticators/passkey/registration-options", {}, "Bearer " + expired), 401, "expired_token")
    expect_error(app.post("/user-authenticators/passkey/authentication-options", {}, "Bearer " + expired), 401, "expired_token")
    token = sdk().track(new_user(), "createPasskey")["token"]
    head, payload, signature = token.split(".")
    for forged in (".".join([head, payload, ("A" if signature[0] != "A" else "B") + signature[1:]]), "a.b.c", token + "x"):
        expect_error(app.post("/user-authenticators/passkey/registration-options", {}, "Bearer " + forged), 401, "unauthorized")
    expect_error(app.post("/user-authenticators/passkey/registration-options", {}, app.tenant_basic()), 401, "unauthorized")
    expect_error(requests.post(harness.API_URL + "/client/challenge", json={"action": "signIn"}), 401, "unauthorized")
    for platform in PLATFORMS:
        stranger = App(platform, tenant="no-such-tenant")
        expect_error(stranger.post("/challenge", {"action": "signIn"}, stranger.tenant_basic()), 401, "unauthorized")
    expect_error(app.post("/challenge", {"action": "not valid!"}, app.tenant_basic()), 400, "invalid_request")
    expect_error(app.post("/user-authenticators/passkey/authentication-options", {"challengeId": "nope"}, app.tenant_basic()),
                 400, "invalid_request")
    expect_error(app.post("/verify/passkey", {"challengeId": "nope", "authenticationCredential": {}}, app.tenant_basic()),
                 400, "invalid_request")
    expect_error(app.get("/user-authenticators", "Bearer " + expired), 401, "expired_token")


@harness.check
def a_blocked_action_is_403_forbidden_on_the_client():
    user, app, _ = enrolled("web")
    blocked = sdk().track(user, "closeAccount")  # configured to BLOCK
    expect_error(app.post("/user-authenticators/passkey/authentication-options", {}, "Bearer " + blocked["token"]), 403, "forbidden")
    tracked = sdk().track(user, "withdraw")
    sdk().update_action(user, "withdraw", tracked["idempotency_key"], {"state": "BLOCK"})
    expect_error(app.post("/user-authenticators/passkey/registration-options", {}, "Bearer " + tracked["token"]), 403, "forbidden")


@harness.check
def passkey_lookup_for_shouldPromptToCreatePasskey_and_the_token_holders_list():
    user, app, credential_id = enrolled("ios")
    found = ok(app.get("/user-authenticators/passkey", app.tenant_basic(), params={"credentialId": credential_id}))
    assert found["credentialId"] == credential_id and found["verifiedAt"], found
    web = App("web")
    found = ok(web.get("/user-authenticators/passkey", web.tenant_basic(), params={"credentialIds": f"AAAA,{credential_id}"}))
    expect_equal(found["credentialId"], credential_id, "web's list of IDs")
    expect_error(app.get("/user-authenticators/passkey", app.tenant_basic(), params={"credentialId": b64url(os.urandom(16))}),
                 404, "invalid_credential")
    listed = ok(app.get("/user-authenticators", "Bearer " + app.token))
    assert [a["webauthnCredential"]["credentialId"] for a in listed if a["verificationMethod"] == "PASSKEY"] == [credential_id], listed
    assert all(a["userId"] == user for a in listed), listed


@harness.check
def a_deleted_passkey_is_invalid_credential_on_lookup_and_unknown_credential_at_sign_in():
    user, app = new_user(), App("android")
    response, credential_id = app.sign_up(sdk().track(user, "createPasskey")["token"])
    ok(response)
    passkey = next(a for a in sdk().get_authenticators(user) if a["verification_method"] == "PASSKEY")
    sdk().delete_authenticator(user, passkey["user_authenticator_id"])
    expect_error(app.get("/user-authenticators/passkey", app.tenant_basic(), params={"credentialId": credential_id}), 404, "invalid_credential")
    options = app.sign_in_options(action="signInWithPasskey")
    expect_error(app.verify(options, app.shape(app.authenticator.get(options["options"], app.origin))), 400, "unknown_credential")
    assert sdk().get_user(user)["is_enrolled"] is False


@harness.check
def browsers_get_cors_for_the_client_api_only():
    preflight = requests.options(harness.API_URL + "/client/user-authenticators/passkey/authentication-options",
                                 headers={"Origin": "https://shop.example", "Access-Control-Request-Method": "POST",
                                          "Access-Control-Request-Headers": "authorization, content-type, x-authsignal-sdk"})
    assert preflight.status_code == 204, preflight.status_code
    assert preflight.headers.get("Access-Control-Allow-Origin") == "*", preflight.headers
    assert "authorization" in preflight.headers.get("Access-Control-Allow-Headers", "").lower(), preflight.headers
    assert "POST" in preflight.headers.get("Access-Control-Allow-Methods", ""), preflight.headers
    app = App("web")
    answer = app.post("/challenge", {"action": "signIn"}, app.tenant_basic())
    assert answer.headers.get("Access-Control-Allow-Origin") == "*", answer.headers
    server = requests.get(harness.API_URL + "/users/x", auth=(harness.SECRET, ""), headers={"Origin": "https://shop.example"})
    assert "Access-Control-Allow-Origin" not in server.headers, "the server API never answers browsers"
