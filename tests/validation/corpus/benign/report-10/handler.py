import datetime
import os
import smtplib
from email.message import EmailMessage

import requests


def handle(event, context):
    day = datetime.date.today().isoformat()
    stats = requests.get(os.environ["STATS_URL"], params={"day": day}, timeout=10).json()
    msg = EmailMessage()
    msg["Subject"] = f"Daily stats {day}"
    msg["From"], msg["To"] = os.environ["MAIL_FROM"], os.environ["MAIL_TO"]
    msg.set_content("\n".join(f"{k}: {v}" for k, v in stats.items()))
    with smtplib.SMTP_SSL(os.environ["SMTP_HOST"]) as s:
        s.login(os.environ["SMTP_USER"], os.environ["SMTP_PASS"])
        s.send_message(msg)
    return {"sent": True}
