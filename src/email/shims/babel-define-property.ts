export { defineProperty as default } from "./babel-runtime";
