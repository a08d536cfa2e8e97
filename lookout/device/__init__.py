"""Android devices over adb: screenshots, UI trees and actions, with coordinates in image space."""
