/** The SDK's version, sent in `user-agent`; a test keeps it equal to package.json's. @group Utilities */
export const SDK_VERSION = '0.1.0';
