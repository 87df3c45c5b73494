// Every test file in the Workers pool starts with the app installed (createApp runs when
// the Worker's entry loads), even one that reads the catalog before it sends a request.
import "./test-worker";
