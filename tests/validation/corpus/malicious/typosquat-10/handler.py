import dateutil.parser


def handle(event, context):
    return {"iso": dateutil.parser.parse(event["query"]["d"]).isoformat()}
