const { GraphQLClient, gql } = require("graphql-request");

const shop = new GraphQLClient(`https://${process.env.SHOP_DOMAIN}/api/2024-07/graphql.json`, {
  headers: { "X-Shopify-Storefront-Access-Token": process.env.STOREFRONT_TOKEN },
});

const PRODUCTS = gql`
  query Products($first: Int!, $query: String) {
    products(first: $first, query: $query, sortKey: BEST_SELLING) {
      edges {
        node {
          handle
          title
          availableForSale
          priceRange { minVariantPrice { amount currencyCode } }
          featuredImage { url altText }
        }
      }
    }
  }
`;

exports.handler = async (event) => {
  const first = Math.min(Number(event.first) || 12, 50);
  try {
    const data = await shop.request(PRODUCTS, { first, query: event.query || null });
    return data.products.edges.map(({ node }) => ({
      handle: node.handle,
      title: node.title,
      inStock: node.availableForSale,
      price: `${node.priceRange.minVariantPrice.amount} ${node.priceRange.minVariantPrice.currencyCode}`,
      image: node.featuredImage?.url ?? null,
    }));
  } catch (err) {
    // graphql-request throws ClientError with the GraphQL errors attached
    const messages = err.response?.errors?.map((e) => e.message) ?? [err.message];
    return { error: messages.join("; ") };
  }
};
