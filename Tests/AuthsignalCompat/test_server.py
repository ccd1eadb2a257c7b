"""The server API through the official SDK: every call, its shapes, and its refusals (spec §2)."""
import os
import uuid

import requests

import harness
from harness import expect_api_error, expect_equal, sdk


def new_user():
    return f"user-{uuid.uuid4().hex[:10]}"


@harness.check
def a_wrong_or_revoked_secret_is_401_unauthorized_with_the_official_text():
    text = "The request is unauthorized. Check that your API key and region base URL are correctly configured."
    for secret in ("bad-secret", os.environ["SESAME_REVOKED_SECRET"], harness.SECRET + "x"):
        error = expect_api_error(401, "unauthorized", sdk(secret).get_user, "someone")
        expect_equal(error.error_description, text, "description")
    # No credentials at all, and the tenant ID where the secret belongs.
    expect_equal(requests.get(harness.API_URL + "/users/someone").status_code, 401, "no Authorization")
    expect_api_error(401, "unauthorized", sdk(harness.TENANT).get_user, "someone")


@harness.check
def track_for_a_new_user_allows_and_enrolled_users_get_a_challenge():
    user = new_user()
    first = sdk().track(user, "signIn")
    expect_equal(first["state"], "ALLOW", "state of a user without authenticators")
    assert first["is_enrolled"] is False and first["token"] and first["url"] and first["idempotency_key"], first
    assert first["allowed_verification_methods"], first
    sdk().enroll_verified_authenticator(user, {"verificationMethod": "SMS", "phoneNumber": "+15550100"})
    second = sdk().track(user, "signIn", {"email": "a@example.org", "username": "alice"})
    expect_equal(second["state"], "CHALLENGE_REQUIRED", "state of an enrolled user")
    expect_equal(second["enrolled_verification_methods"], ["SMS"], "methods")
    fetched = sdk().get_user(user)
    expect_equal((fetched["email"], fetched["username"], fetched["is_enrolled"]), ("a@example.org", "alice", True), "stored attributes")


@harness.check
def an_idempotency_key_reuses_the_action_and_refuses_another_users():
    user, key = new_user(), uuid.uuid4().hex
    first = sdk().track(user, "pay", {"idempotencyKey": key})
    again = sdk().track(user, "pay", {"idempotencyKey": key})
    expect_equal((first["idempotency_key"], again["idempotency_key"]), (key, key), "keys")
    expect_api_error(400, "invalid_request", sdk().track, new_user(), "pay", {"idempotencyKey": key})
    expect_api_error(400, "invalid_request", sdk().track, user, "otherAction", {"idempotencyKey": key})


@harness.check
def action_codes_and_bodies_are_checked():
    for bad in ("bad action", "x" * 65, "é"):
        expect_api_error(400, "invalid_request", sdk().track, new_user(), bad)
    expect_api_error(400, "invalid_request", sdk().track, new_user(), "ok", {"scope": "write:everything"})
    expect_api_error(400, "invalid_request", sdk().track, new_user(), "ok", {"custom": {"nested": {"a": 1}}})
    expect_api_error(400, "invalid_request", sdk().update_user, new_user(), {"emailVerified": "yes"})
    response = requests.post(harness.API_URL + "/users/u/actions/a", data="{not json", auth=(harness.SECRET, ""),
                             headers={"Content-Type": "application/json"})
    harness.expect_error(response, 400, "invalid_request")


@harness.check
def get_and_update_action_and_block():
    user = new_user()
    tracked = sdk().track(user, "withdraw")
    key = tracked["idempotency_key"]
    action = sdk().get_action(user, "withdraw", key)
    assert action["state"] == "ALLOW" and action["output"] == {} and action["created_at"], action
    expect_equal(sdk().update_action(user, "withdraw", key, {"state": "REVIEW_REQUIRED"})["state"], "REVIEW_REQUIRED", "update")
    expect_equal(sdk().get_action(user, "withdraw", key)["state"], "REVIEW_REQUIRED", "after update")
    expect_equal(sdk().update_action(user, "withdraw", key, {"state": "BLOCK"})["state"], "BLOCK", "block")
    validated = sdk().validate_challenge({"token": tracked["token"]})
    assert validated["is_valid"] is False and validated["state"] == "BLOCK", validated
    expect_api_error(400, "invalid_request", sdk().update_action, user, "withdraw", key, {"state": "MAYBE"})
    expect_api_error(404, "not_found", sdk().get_action, user, "withdraw", "no-such-key")
    expect_api_error(404, "not_found", sdk().get_action, new_user(), "withdraw", key)
    expect_api_error(404, "not_found", sdk().get_action, user, "otherAction", key)


@harness.check
def an_action_code_configured_to_block_is_blocked_at_track():
    tracked = sdk().track(new_user(), "closeAccount")  # sesame authsignal action set-outcome --action closeAccount --state BLOCK
    expect_equal(tracked["state"], "BLOCK", "configured outcome")


@harness.check
def validate_of_a_fresh_track_token_is_not_valid_but_describes_the_action():
    user = new_user()
    tracked = sdk().track(user, "login")
    validated = sdk().validate_challenge({"token": tracked["token"], "userId": user, "action": "login"})
    assert validated["is_valid"] is False and validated["state"] == "ALLOW", validated
    expect_equal((validated["user_id"], validated["action"], validated["action_code"], validated["idempotency_key"]),
                 (user, "login", "login", tracked["idempotency_key"]), "described")


@harness.check
def validate_refuses_expired_forged_foreign_and_mismatched_tokens():
    user = new_user()
    token = sdk().track(user, "login")["token"]
    head, payload, signature = token.split(".")
    forged = ".".join([head, payload, ("A" if signature[0] != "A" else "B") + signature[1:]])
    for bad, reason in ((os.environ["SESAME_EXPIRED_TOKEN"], "expired_token"), (forged, "invalid_token"), ("not-a-token", "invalid_token")):
        validated = sdk().validate_challenge({"token": bad})
        assert validated["is_valid"] is False and validated.get("error") == reason and "state" not in validated, validated
    expect_equal(sdk().validate_challenge({"token": token, "userId": "someone-else"})["error"], "user_mismatch", "user")
    expect_equal(sdk().validate_challenge({"token": token, "action": "otherAction"})["error"], "action_mismatch", "action")
    expect_api_error(400, "invalid_request", sdk().validate_challenge, {"userId": user})


@harness.check
def users_update_get_delete_and_unknown_users_are_not_enrolled():
    user = new_user()
    unknown = sdk().get_user(user)
    assert unknown["is_enrolled"] is False, unknown
    updated = sdk().update_user(user, {"email": "b@example.org", "emailVerified": True, "displayName": "Bee",
                                       "custom": {"plan": "gold", "seats": 3}})
    expect_equal((updated["email"], updated["email_verified"], updated["display_name"], updated["custom"]),
                 ("b@example.org", True, "Bee", {"plan": "gold", "seats": 3}), "updated")
    # The Ruby SDK updates with POST.
    posted = requests.post(harness.API_URL + f"/users/{user}", json={"username": "bee"}, auth=(harness.SECRET, ""))
    expect_equal(harness.ok(posted)["username"], "bee", "POST update")
    sdk().enroll_verified_authenticator(user, {"verificationMethod": "EMAIL_OTP", "email": "b@example.org"})
    assert sdk().get_user(user)["is_enrolled"] is True
    sdk().delete_user(user)
    after = sdk().get_user(user)
    assert after["is_enrolled"] is False and "email" not in after, after
    expect_equal(sdk().get_authenticators(user), [], "authenticators after delete")
    sdk().delete_user(user)  # deleting an unknown user is no error


@harness.check
def user_ids_are_percent_decoded_path_segments():
    user = "jane doe+1@example.org"  # Python quotes the space and '@'; '+' arrives as it is
    sdk().update_user(user, {"displayName": "Jane"})
    expect_equal(sdk().get_user(user)["display_name"], "Jane", "percent-decoded ID")
    expect_equal(sdk().track(user, "login")["state"], "ALLOW", "track under the same ID")
    assert sdk().validate_challenge({"token": sdk().track(user, "login")["token"], "userId": user})["user_id"] == user


@harness.check
def authenticators_enroll_list_delete_and_refusals():
    user = new_user()
    sms = sdk().enroll_verified_authenticator(user, {"verificationMethod": "SMS", "phoneNumber": "+15550123"})["authenticator"]
    assert sms["verification_method"] == "SMS" and sms["phone_number"] == "+15550123" and sms["user_id"] == user, sms
    listed = sdk().get_authenticators(user)
    expect_equal([a["user_authenticator_id"] for a in listed], [sms["user_authenticator_id"]], "listed")
    expect_api_error(400, "invalid_request", sdk().enroll_verified_authenticator, user, {"verificationMethod": "PASSKEY"})
    expect_api_error(400, "invalid_request", sdk().enroll_verified_authenticator, user, {"verificationMethod": "EMAIL_OTP"})
    sdk().delete_authenticator(user, sms["user_authenticator_id"])
    expect_equal(sdk().get_authenticators(user), [], "after delete")
    expect_api_error(404, "not_found", sdk().delete_authenticator, user, sms["user_authenticator_id"])
