import pathlib

import joblib
import numpy as np

MODEL = joblib.load(pathlib.Path(__file__).with_name("model.joblib"))


def handle(event, context):
    features = np.array(event["body"]["rows"], dtype=float)
    return {"predictions": MODEL.predict(features).tolist()}
