import pandas as pd
import io

def handle(event, context):
    df = pd.read_csv(io.StringIO(event["body"]))
    df["total"] = df["qty"] * df["price"]
    summary = df.groupby("region")["total"].sum().round(2).to_dict()
    return {"summary": summary}
