"""The project routes through the official SDK with an API key: auth methods, the passkey policy, platforms.

Imported after the passkey checks: by then users have passkeys, so the relying party ID is permanent.
"""
from appwrite.enums.project_auth_method_id import ProjectAuthMethodId
from appwrite.enums.project_policy_id import ProjectPolicyId
from appwrite.services.account import Account
from appwrite.services.project import Project

from harness import KEY, check, client, expect_equal, expect_error

FINGERPRINT = ":".join(["14"] * 32)


@check
def passkey_policy_and_auth_method():
    project = Project(client(key=KEY))
    policy = project.get_policy(policy_id=ProjectPolicyId.PASSKEY)
    expect_equal(policy.rpid, "shop.example", "rpId")
    assert "https://shop.example" in policy.origins and "http://localhost" in policy.origins, policy.origins
    # Same value: a no-op answering the Project; another value while passkeys exist: refused.
    expect_equal(project.update_passkey_policy(rp_id="shop.example").name, "Default", "update_passkey_policy returns the Project")
    expect_error("general_argument_invalid", 400, project.update_passkey_policy, rp_id="other.example")
    expect_equal(project.get_policy(policy_id=ProjectPolicyId.PASSKEY).rpid, "shop.example", "unchanged")

    try:
        updated = project.update_auth_method(method_id=ProjectAuthMethodId.PASSKEY, enabled=False)
        expect_equal([m.enabled for m in updated.authmethods if m.to_dict()["$id"] == "passkey"], [False], "passkey switched off")
        expect_error("user_auth_method_unsupported", 501, Account(client()).create_passkey_token)
    finally:
        project.update_auth_method(method_id=ProjectAuthMethodId.PASSKEY, enabled=True)
    expect_error("general_unauthorized_scope", 401, Project(client()).get_policy, policy_id=ProjectPolicyId.PASSKEY)


@check
def platforms():
    project = Project(client(key=KEY))
    web = project.create_web_platform(platform_id="app-web", name="App", hostname="app.shop.example")
    expect_equal((web.type.value, web.hostname), ("web", "app.shop.example"), "web platform")
    android = project.create_android_platform(platform_id="app-android", name="Android", application_id="com.shop.app",
                                              fingerprints=[FINGERPRINT])
    expect_equal((android.applicationid, android.fingerprints), ("com.shop.app", [FINGERPRINT]), "android platform")
    apple = project.create_apple_platform(platform_id="app-ios", name="iOS", bundle_identifier="com.shop.App")
    expect_equal(apple.bundleidentifier, "com.shop.App", "apple platform")
    expect_equal(project.get_platform(platform_id="app-web").hostname, "app.shop.example", "get_platform dispatches by type")
    ids = [p.id for p in project.list_platforms().platforms]
    assert {"app-web", "app-android", "app-ios"} <= set(ids), ids
    origins = project.get_policy(policy_id=ProjectPolicyId.PASSKEY).origins
    assert "https://app.shop.example" in origins and any(o.startswith("android:apk-key-hash:") for o in origins), origins
    expect_error("platform_already_exists", 409, project.create_web_platform, platform_id="app-web", name="Again",
                 hostname="x.shop.example")
    expect_error("general_argument_invalid", 400, project.create_web_platform, platform_id="bad-web", name="Bad", hostname="a b")
    for platform_id in ("app-web", "app-android", "app-ios"):
        expect_equal(project.delete_platform(platform_id=platform_id), b"", "delete_platform")
    expect_error("platform_not_found", 404, project.get_platform, platform_id="app-web")
    expect_error("platform_not_found", 404, project.delete_platform, platform_id="app-web")


@check
def platform_updates_and_session_refresh():
    from test_account import new_account, signed_in

    project = Project(client(key=KEY))
    project.create_web_platform(platform_id="upd-web", name="Old", hostname="old.shop.example")
    updated = project.update_web_platform(platform_id="upd-web", name="New", hostname="new.shop.example")
    expect_equal((updated.name, updated.hostname), ("New", "new.shop.example"), "update_web_platform")
    expect_error("platform_method_unsupported", 400, project.update_apple_platform, platform_id="upd-web", name="x",
                 bundle_identifier="com.shop.App")
    project.delete_platform(platform_id="upd-web")

    _, email = new_account()
    user_client, session = signed_in(email)
    refreshed = Account(user_client).update_session(session_id="current")
    expect_equal((refreshed.id, refreshed.current), (session.id, True), "update_session")
