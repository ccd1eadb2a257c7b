"""Passkeys through the official SDK: registration, usernameless sign-in, token exchange, management, and errors.

The server's default project is configured before the suite runs: relying party `shop.example`, web platforms
`shop.example` and `localhost`; SESAME_BARE_PROJECT names a project without platforms.
"""
import os

from appwrite.id import ID
from appwrite.services.account import Account

from authenticator import SoftwareAuthenticator
from harness import KEY, check, client, expect_equal, expect_error
from test_account import new_account, signed_in

ORIGIN = "https://shop.example"
BARE_PROJECT = os.environ["SESAME_BARE_PROJECT"]


def register(user_client, authenticator, name="Laptop", passkey_id=None, origin=ORIGIN):
    """Registration through the SDK: create_passkey, the authenticator, update_passkey_verification."""
    account = Account(user_client)
    challenge = account.create_passkey(passkey_id=passkey_id, name=name)
    credential = authenticator.create(challenge.publickey, origin)
    return account.update_passkey_verification(passkey_id=challenge.passkeyid, credential=credential)


def sign_in(authenticator, origin=ORIGIN, guest=None):
    """Usernameless sign-in as a guest: create_passkey_token, the authenticator, update_passkey_token."""
    account = Account(guest or client())
    challenge = account.create_passkey_token()
    return account.update_passkey_token(challenge_id=challenge.id, credential=authenticator.get(challenge.publickey, origin))


@check
def register_sign_in_and_manage_passkeys():
    user, email = new_account()
    user_client, _ = signed_in(email)
    account = Account(user_client)
    authenticator = SoftwareAuthenticator()

    challenge = account.create_passkey(name="Laptop")
    expect_equal(challenge.id, challenge.passkeyid, "registration $id")
    expect_equal(challenge.publickey["rp"]["id"], "shop.example", "rp.id")
    expect_equal(challenge.publickey["authenticatorSelection"]["userVerification"], "required", "userVerification")
    passkey = account.update_passkey_verification(passkey_id=challenge.passkeyid,
                                                  credential=authenticator.create(challenge.publickey, ORIGIN))
    expect_equal((passkey.id, passkey.name, passkey.accessedat), (challenge.passkeyid, "Laptop", ""), "verified passkey")
    listed = account.list_passkeys()
    expect_equal((listed.total, [p.id for p in listed.passkeys]), (1, [passkey.id]), "list_passkeys")

    token = sign_in(authenticator)
    expect_equal(token.userid, user.id, "the credential names its user")
    assert token.secret and token.phrase == "", token
    session = Account(client(key=KEY)).create_session(user_id=user.id, secret=token.secret)
    expect_equal((session.provider, session.factors), ("passkey", ["passkey"]), "passkey session")
    assert session.mfaupdatedat, "a passkey session counts as multi-factor"
    me = Account(client(session=session.secret)).get()
    expect_equal(me.id, user.id, "account.get() over the passkey session")
    assert account.get_passkey(passkey_id=passkey.id).accessedat, "sign-in records accessedAt"

    renamed = account.update_passkey(passkey_id=passkey.id, name="Work laptop")
    expect_equal(renamed.name, "Work laptop", "rename")
    expect_equal(account.delete_passkey(passkey_id=passkey.id), b"", "delete_passkey returns the empty body")
    expect_equal(account.list_passkeys().total, 0, "after delete")
    expect_error("user_passkey_invalid", 401, sign_in, authenticator)


@check
def registration_errors():
    _, email = new_account()
    user_client, _ = signed_in(email)
    account = Account(user_client)
    authenticator = SoftwareAuthenticator()
    passkey = register(user_client, authenticator, passkey_id=ID.custom("my-key"))
    expect_equal(passkey.id, "my-key", "custom passkey ID")
    expect_error("user_passkey_already_exists", 409, account.create_passkey, passkey_id=ID.custom("my-key"))
    expect_error("general_argument_invalid", 400, account.create_passkey, name="n" * 129)
    expect_error("user_passkey_not_found", 404, account.get_passkey, passkey_id="no-such-passkey")
    expect_error("user_passkey_not_found", 404, account.update_passkey_verification, passkey_id="no-such-passkey",
                 credential={"id": "x"})

    # A failed verification consumes the registration.
    challenge = account.create_passkey()
    bad_origin = SoftwareAuthenticator().create(challenge.publickey, "https://evil.example")
    expect_error("user_passkey_invalid", 401, account.update_passkey_verification, passkey_id=challenge.passkeyid,
                 credential=bad_origin)
    good = SoftwareAuthenticator().create(challenge.publickey, ORIGIN)
    expect_error("user_passkey_not_found", 404, account.update_passkey_verification, passkey_id=challenge.passkeyid,
                 credential=good)
    challenge = account.create_passkey()
    expect_error("user_passkey_invalid", 401, account.update_passkey_verification, passkey_id=challenge.passkeyid,
                 credential=SoftwareAuthenticator(user_verified=False).create(challenge.publickey, ORIGIN))

    # Finishing from another session of the same user is refused.
    challenge = account.create_passkey()
    other_client, _ = signed_in(email)
    expect_error("user_invalid_token", 401, Account(other_client).update_passkey_verification, passkey_id=challenge.passkeyid,
                 credential=SoftwareAuthenticator().create(challenge.publickey, ORIGIN))
    expect_error("general_unauthorized_scope", 401, Account(client()).create_passkey)


@check
def ten_passkeys_counting_pending_registrations():
    _, email = new_account()
    user_client, _ = signed_in(email)
    account = Account(user_client)
    for _ in range(10):
        account.create_passkey()
    expect_error("user_passkey_limit_exceeded", 400, account.create_passkey)
    expect_equal(account.list_passkeys().total, 0, "pending registrations are not passkeys")


@check
def sign_in_errors():
    _, email = new_account()
    user_client, _ = signed_in(email)
    authenticator = SoftwareAuthenticator()
    register(user_client, authenticator)
    guest = Account(client())
    challenge = guest.create_passkey_token()
    expect_equal(challenge.passkeyid, "", "sign-in challenges have no passkey")
    expect_equal(challenge.publickey["allowCredentials"], [], "usernameless")
    assertion = authenticator.get(challenge.publickey, ORIGIN)
    guest.update_passkey_token(challenge_id=challenge.id, credential=assertion)
    expect_error("user_invalid_token", 401, guest.update_passkey_token, challenge_id=challenge.id,
                 credential=authenticator.get(challenge.publickey, ORIGIN))
    expect_error("user_passkey_invalid", 401, sign_in, authenticator, "https://evil.example")
    stranger = SoftwareAuthenticator()
    stranger.create({"rp": {"id": "shop.example"}, "user": {"id": "AQ"}, "challenge": "AAAA"}, ORIGIN)
    expect_error("user_passkey_invalid", 401, sign_in, stranger)
    token = sign_in(authenticator, guest=client(key=KEY))
    expect_error("user_invalid_token", 401, Account(client()).create_session, user_id="someone-else", secret=token.secret)
    expect_error("user_invalid_token", 401, Account(client()).create_session, user_id=token.userid, secret=token.secret)
    # No web platform on the relying party: Appwrite's answer to an unregistered client, naming what to add.
    expect_error("general_unknown_origin", 403, Account(client(project=BARE_PROJECT)).create_passkey_token)


@check
def localhost_relying_party():
    _, email = new_account()
    user_client, _ = signed_in(email)
    user_client.add_header("origin", "http://localhost:5173")
    authenticator = SoftwareAuthenticator()
    challenge = Account(user_client).create_passkey(name="Dev")
    expect_equal(challenge.publickey["rp"]["id"], "localhost", "rp.id from a localhost origin")
    Account(user_client).update_passkey_verification(passkey_id=challenge.passkeyid,
                                                     credential=authenticator.create(challenge.publickey, "http://localhost:5173"))
    local_guest = client()
    local_guest.add_header("origin", "http://localhost:5173")
    token = sign_in(authenticator, origin="http://localhost:5173", guest=local_guest)
    assert token.secret


@check
def registering_and_deleting_need_a_recent_sign_in():
    # SESAME_STALE_SESSION signed in 11 minutes ago (the test driver wrote it into the server's database).
    stale = Account(client(session=os.environ["SESAME_STALE_SESSION"]))
    expect_equal(stale.get().id, "stale-user", "the stale session still works for reading")
    expect_error("user_reauthentication_required", 401, stale.create_passkey)
    expect_error("user_reauthentication_required", 401, stale.delete_passkey, passkey_id="any-passkey")
    expect_equal(stale.list_passkeys().total, 0, "listing has no recency rule")


@check
def passkey_list_queries():
    from appwrite.query import Query

    _, email = new_account()
    user_client, _ = signed_in(email)
    ids = [register(user_client, SoftwareAuthenticator(), name=name).id for name in ("b", "c", "a")]
    account = Account(user_client)
    page = account.list_passkeys(queries=[Query.limit(2)])
    expect_equal((page.total, len(page.passkeys)), (3, 2), "limit keeps the total")
    expect_equal([p.name for p in account.list_passkeys(queries=[Query.order_asc("name")]).passkeys], ["a", "b", "c"], "orderAsc")
    expect_equal([p.name for p in account.list_passkeys(queries=[Query.equal("name", ["a", "b"])]).passkeys], ["b", "a"], "equal")
    expect_equal([p.id for p in account.list_passkeys(queries=[Query.cursor_after(ids[0]), Query.limit(1)]).passkeys], [ids[1]],
                 "cursorAfter")
    expect_equal(account.list_passkeys(total=False).total, 0, "total=false")
    expect_error("general_query_invalid", 400, account.list_passkeys, queries=[Query.search("name", "a")])
    expect_error("general_query_invalid", 400, account.list_passkeys, queries=[Query.order_desc("credentialId")])
    expect_error("general_cursor_not_found", 400, account.list_passkeys, queries=[Query.cursor_after("no-such-passkey")])
