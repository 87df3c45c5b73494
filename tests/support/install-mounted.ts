// The workers-mounted project's files start with the consumer Worker loaded (edgework under /agents).
import "./mounted-test-worker";
