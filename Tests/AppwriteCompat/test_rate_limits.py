"""Rate limits through the SDK. Imported last: earlier checks spend some of this IP's hourly sign-in starts."""
from appwrite.services.account import Account

from harness import KEY, check, client, expect_error


@check
def sign_in_rate_limit_per_ip():
    # The 11th guest start from this IP within the hour is refused, whatever the earlier checks spent.
    guest = Account(client())
    for _ in range(11):
        try:
            guest.create_passkey_token()
        except Exception:  # noqa: BLE001 - the refusal is checked below
            break
    expect_error("general_rate_limit_exceeded", 429, guest.create_passkey_token)
    Account(client(key=KEY)).create_passkey_token()  # API keys are not rate limited


@check
def password_attempts_per_email():
    from test_account import new_account

    _, email = new_account()
    guest = Account(client())
    for _ in range(10):
        expect_error("user_invalid_credentials", 401, guest.create_email_password_session, email=email, password="wrong-password")
    expect_error("general_rate_limit_exceeded", 429, guest.create_email_password_session, email=email, password="password123")
    Account(client(key=KEY)).create_email_password_session(email=email, password="password123")  # keys are exempt
