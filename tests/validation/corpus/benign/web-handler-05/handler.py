import os
import smtplib
from email.message import EmailMessage
from urllib.parse import parse_qs

SMTP_HOST = os.environ.get("SMTP_HOST", "smtp.eu.mailgun.org")
SMTP_USER = os.environ["SMTP_USER"]
SMTP_PASSWORD = os.environ["SMTP_PASSWORD"]
INBOX = os.environ.get("CONTACT_INBOX", "hello@example.com")


def _field(form, name, limit):
    return (form.get(name, [""])[0]).strip()[:limit]


def handle(event, context=None):
    if event.get("httpMethod") != "POST":
        return {"statusCode": 405, "headers": {"allow": "POST"}}
    form = parse_qs(event.get("body") or "")
    if _field(form, "website", 100):  # honeypot: real people leave it empty
        return {"statusCode": 303, "headers": {"location": "/thanks"}}

    name, email, message = _field(form, "name", 100), _field(form, "email", 200), _field(form, "message", 5000)
    errors = [f for f, v in (("name", name), ("email", email), ("message", message)) if not v]
    if "@" not in email:
        errors.append("email")
    if errors:
        return {"statusCode": 303, "headers": {"location": "/contact?missing=" + ",".join(sorted(set(errors)))}}

    msg = EmailMessage()
    msg["Subject"] = f"Contact form: {name}"
    msg["From"] = f"Website <{SMTP_USER}>"
    msg["To"] = INBOX
    msg["Reply-To"] = email
    msg.set_content(message)
    with smtplib.SMTP(SMTP_HOST, 587, timeout=10) as smtp:
        smtp.starttls()
        smtp.login(SMTP_USER, SMTP_PASSWORD)
        smtp.send_message(msg)
    return {"statusCode": 303, "headers": {"location": "/thanks"}}
