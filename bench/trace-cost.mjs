// What tracing costs a run (bench/trace-cost.ts): `node bench/trace-cost.mjs` prints it as JSON.
import { importTs } from "../cli/import-ts.mjs";

const { traceCost } = await importTs("bench-trace-cost", `export { traceCost } from "./bench/trace-cost";`);
console.log(JSON.stringify(await traceCost(400)));
