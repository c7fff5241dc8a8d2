interface Order {
  id: string;
  lines: { sku: string; qty: number; price: number }[];
}

export const handler = async (event: { body: string }): Promise<{ statusCode: number; body: string }> => {
  const order: Order = JSON.parse(event.body);
  const total = order.lines.reduce((sum, l) => sum + l.qty * l.price, 0);
  return { statusCode: 200, body: JSON.stringify({ id: order.id, total: Math.round(total * 100) / 100 }) };
};
