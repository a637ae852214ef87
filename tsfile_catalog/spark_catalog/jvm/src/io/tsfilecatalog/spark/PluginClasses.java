package io.tsfilecatalog.spark;

import java.io.File;
import java.io.IOException;
import java.net.URISyntaxException;
import java.security.CodeSource;
import java.util.Enumeration;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;

/**
 * Loads every class of the plugin's jar at once, while the class loader that reads the jar is
 * open.
 *
 * <p>The Thrift JDBC server closes that loader when the first JDBC connection closes (Hive's
 * {@code SessionState.close} closes the URL class loaders of the session's conf, which hold
 * {@code spark.jars}): a class not loaded by then could never be loaded, and a later
 * connection's UPDATE, MERGE or CALL failed with {@code NoClassDefFoundError}. Classes already
 * defined stay usable. Called when the extensions install (a server builds its first session
 * before it accepts any connection) and when a catalog is initialized; the first call loads.
 */
final class PluginClasses {
  private static volatile boolean loaded;

  private PluginClasses() {}

  static void load() {
    if (loaded) {
      return;
    }
    synchronized (PluginClasses.class) {
      if (loaded) {
        return;
      }
      CodeSource source = PluginClasses.class.getProtectionDomain().getCodeSource();
      File jar = null;
      try {
        jar = source == null ? null : new File(source.getLocation().toURI());
      } catch (URISyntaxException | IllegalArgumentException e) {
        jar = null; // not a file URL: nothing this loader could lose
      }
      if (jar != null && jar.isFile()) {
        loadAll(jar);
      }
      loaded = true;
    }
  }

  private static void loadAll(File jar) {
    ClassLoader loader = PluginClasses.class.getClassLoader();
    try (JarFile archive = new JarFile(jar)) {
      Enumeration<JarEntry> entries = archive.entries();
      while (entries.hasMoreElements()) {
        String name = entries.nextElement().getName();
        if (name.endsWith(".class") && name.startsWith("io/tsfilecatalog/")) {
          String binary = name.substring(0, name.length() - ".class".length()).replace('/', '.');
          Class.forName(binary, false, loader);
        }
      }
    } catch (IOException | ClassNotFoundException | LinkageError e) {
      throw new IllegalStateException(
          "tsfile catalog: cannot load the plugin's classes from " + jar + ": " + e, e);
    }
  }
}
