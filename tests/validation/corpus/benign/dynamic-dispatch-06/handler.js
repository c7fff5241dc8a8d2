class Calculator {
  add(a, b) { return a + b; }
  sub(a, b) { return a - b; }
  mul(a, b) { return a * b; }
}

exports.handler = async (event) => {
  const calc = new Calculator();
  const op = event.op;
  if (!Object.getOwnPropertyNames(Calculator.prototype).includes(op) || op === "constructor") {
    return { error: "unsupported" };
  }
  return { result: calc[op](Number(event.a), Number(event.b)) };
};
