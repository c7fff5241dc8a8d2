const { z } = require("zod");

const Signup = z.object({
  email: z.string().email(),
  password: z.string().min(12),
  age: z.number().int().min(13).optional(),
});

exports.handler = async (event) => {
  const result = Signup.safeParse(JSON.parse(event.body || "{}"));
  if (!result.success) return { statusCode: 422, body: JSON.stringify(result.error.flatten()) };
  return { statusCode: 201, body: JSON.stringify({ email: result.data.email }) };
};
