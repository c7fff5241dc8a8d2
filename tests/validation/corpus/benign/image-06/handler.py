PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="


def handle(event, context=None):
    # 1x1 tracking pixel for email opens
    print({"opened": event.get("queryStringParameters", {}).get("m")})
    return {
        "statusCode": 200,
        "headers": {"Content-Type": "image/png", "Cache-Control": "no-store"},
        "body": PIXEL,
        "isBase64Encoded": True,
    }
