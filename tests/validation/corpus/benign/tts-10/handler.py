import base64
import os

import boto3

polly = boto3.client("polly", region_name=os.environ.get("AWS_REGION", "eu-west-1"))


def handle(event, context):
    text = event["body"]["text"][:1000]
    audio = polly.synthesize_speech(Text=text, OutputFormat="mp3", VoiceId="Joanna")["AudioStream"].read()
    return {"audio": base64.b64encode(audio).decode()}
