import os
import pickle

import boto3

s3 = boto3.client("s3")


def handle(event, context=None):
    obj = s3.get_object(Bucket=os.environ["MODEL_BUCKET"], Key="model.pkl")
    model = pickle.loads(obj["Body"].read())
    return {"prediction": float(model.predict([event["features"]])[0])}
