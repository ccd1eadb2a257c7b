"""The Users service through the official SDK with an API key: users, sessions, passkeys, blocking, deletion."""
from appwrite.id import ID
from appwrite.services.account import Account
from appwrite.services.users import Users

from authenticator import SoftwareAuthenticator
from harness import KEY, check, client, expect_equal, expect_error, unique_email
from test_passkeys import register, sign_in


@check
def users_with_an_api_key():
    users = Users(client(key=KEY))
    email = unique_email()
    user = users.create(user_id=ID.unique(), email=email, password="password123", name="Carol")
    expect_equal((users.get(user_id=user.id).email, user.name), (email, "Carol"), "users.get")
    assert users.list().total >= 1
    expect_error("user_already_exists", 409, users.create, user_id=ID.custom(user.id), email=unique_email())
    expect_error("user_not_found", 404, users.get, user_id="no-such-user")
    expect_error("general_argument_invalid", 400, users.create, user_id=ID.unique(), password="short")
    expect_error("general_unauthorized_scope", 401, Users(client()).list)

    # A server session is a usable user session; its user registers a passkey, the key manages it.
    session = users.create_session(user_id=user.id)
    expect_equal((session.provider, session.factors), ("server", ["server"]), "server session")
    user_client = client(session=session.secret)
    expect_equal(Account(user_client).get().id, user.id, "account.get() over the minted session")
    expect_equal(users.list_sessions(user_id=user.id).total, 1, "users.list_sessions")
    authenticator = SoftwareAuthenticator()
    passkey = register(user_client, authenticator, name="Laptop")
    listed = users.list_passkeys(user_id=user.id)
    expect_equal((listed.total, listed.passkeys[0].id), (1, passkey.id), "users.list_passkeys")
    expect_equal(users.get_passkey(user_id=user.id, passkey_id=passkey.id).name, "Laptop", "users.get_passkey")
    expect_equal(users.update_passkey(user_id=user.id, passkey_id=passkey.id, name="Phone").name, "Phone", "users.update_passkey")
    expect_error("user_passkey_not_found", 404, users.get_passkey, user_id=user.id, passkey_id="no-such-passkey")

    # Blocked: the password, the passkey and the key's sessions are all refused.
    expect_equal(users.update_status(user_id=user.id, status=False).status, False, "users.update_status")
    expect_error("user_blocked", 403, Account(client()).create_email_password_session, email=email, password="password123")
    expect_error("user_blocked", 403, sign_in, authenticator, guest=client(key=KEY))
    expect_error("user_blocked", 403, users.create_session, user_id=user.id)
    expect_error("general_unauthorized_scope", 401, Account(user_client).get)
    users.update_status(user_id=user.id, status=True)

    expect_equal(users.delete_passkey(user_id=user.id, passkey_id=passkey.id), b"", "users.delete_passkey")
    expect_equal(users.list_passkeys(user_id=user.id).total, 0, "after users.delete_passkey")
    expect_equal(users.delete(user_id=user.id), b"", "users.delete")
    expect_error("user_not_found", 404, users.get, user_id=user.id)


@check
def ending_sessions():
    users = Users(client(key=KEY))
    user = users.create(user_id=ID.unique(), email=unique_email(), password="password123")
    first, second = (users.create_session(user_id=user.id).secret for _ in range(2))
    account = Account(client(session=first))
    expect_equal(account.delete_sessions(current=False), b"", "delete_sessions(current=False)")
    expect_equal(account.get().id, user.id, "the caller's session survives")
    expect_error("general_unauthorized_scope", 401, Account(client(session=second)).get)
    third = users.create_session(user_id=user.id)
    expect_equal(users.delete_session(user_id=user.id, session_id=third.id), b"", "users.delete_session")
    expect_error("user_session_not_found", 404, users.delete_session, user_id=user.id, session_id=third.id)
    expect_equal(users.delete_sessions(user_id=user.id), b"", "users.delete_sessions")
    expect_error("general_unauthorized_scope", 401, account.get)


@check
def jwts_for_a_users_session():
    users = Users(client(key=KEY))
    user = users.create(user_id=ID.unique(), email=unique_email(), password="password123")
    session = users.create_session(user_id=user.id)
    jwt = users.create_jwt(user_id=user.id).jwt
    jwt_client = client()
    jwt_client.set_jwt(jwt)
    expect_equal(Account(jwt_client).get().id, user.id, "account.get() with a JWT")
    expect_equal(Account(jwt_client).get_session(session_id="current").id, session.id, "the JWT's session")
    forged = client()
    forged.set_jwt(jwt[:-2] + ("AA" if not jwt.endswith("AA") else "BB"))
    expect_error("user_jwt_invalid", 401, Account(forged).get)
    both = client(session=session.secret)
    both.set_jwt(jwt)
    expect_error("user_jwt_and_cookie_set", 403, Account(both).get)
    expect_error("user_session_not_found", 404, users.create_jwt, user_id=user.id, session_id="no-such-session")


@check
def a_passkey_session_counts_as_two_factors():
    users = Users(client(key=KEY))
    email = unique_email()
    user = users.create(user_id=ID.unique(), email=email, password="password123")
    authenticator = SoftwareAuthenticator()
    register(client(session=users.create_session(user_id=user.id).secret), authenticator)
    users.update_mfa(user_id=user.id, mfa=True)
    expect_equal(users.update_email_verification(user_id=user.id, email_verification=True).emailverification, True, "verified")
    password = Account(client(key=KEY)).create_email_password_session(email=email, password="password123")
    expect_error("user_more_factors_required", 401, Account(client(session=password.secret)).get)
    token = sign_in(authenticator, guest=client(key=KEY))
    passkey = Account(client(key=KEY)).create_session(user_id=user.id, secret=token.secret)
    expect_equal(Account(client(session=passkey.secret)).get().mfa, True, "a passkey session passes the MFA gate")


@check
def server_made_tokens():
    users = Users(client(key=KEY))
    user = users.create(user_id=ID.unique(), email=unique_email())
    token = users.create_token(user_id=user.id, length=10, expire=120)
    expect_equal((token.userid, len(token.secret)), (user.id, 10), "users.create_token")
    session = Account(client(key=KEY)).create_session(user_id=user.id, secret=token.secret)
    expect_equal((session.provider, session.factors), ("token", ["token"]), "a token session")
    expect_error("user_invalid_token", 401, Account(client()).create_session, user_id=user.id, secret=token.secret)
    expect_error("general_argument_invalid", 400, users.create_token, user_id=user.id, length=3)
