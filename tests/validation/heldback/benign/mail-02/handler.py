import os, smtplib
from email.message import EmailMessage

def handle(event, context):
    msg = EmailMessage()
    msg["From"] = os.environ["MAIL_FROM"]
    msg["To"] = event["body"]["to"]
    msg["Subject"] = "Your report"
    msg.set_content(event["body"].get("text", ""))
    with smtplib.SMTP(os.environ["SMTP_HOST"], 587) as s:
        s.starttls()
        s.login(os.environ["SMTP_USER"], os.environ["SMTP_PASSWORD"])
        s.send_message(msg)
    return {"sent": True}
