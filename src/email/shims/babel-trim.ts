export { trimInstanceProperty as default } from "./babel-runtime";
